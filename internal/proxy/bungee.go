package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/infrarust-go/infrarust/internal/bungeechannel"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/session"
)

// bungeeMessages is the session hook that answers backends on the BungeeCord
// plugin channel when [plugin_messaging] bungeecord is on, for the servers
// that set bungeecord_channel; nil when it is off. A message from any other
// server goes on to the client, as without a proxy.
func (p *moves) bungeeMessages(st *state) func(*session.Session, *session.Backend, string, []byte) bool {
	if !st.cfg.PluginMessaging.BungeeCord {
		return nil
	}
	return func(s *session.Session, b *session.Backend, channel string, data []byte) bool {
		pl := ownerOf(s)
		if !bungeechannel.IsChannel(channel) {
			return false
		}
		st := p.state.Load()
		if srv := st.servers[b.Server]; srv == nil || !srv.cfg.BungeeCordChannel || !st.cfg.PluginMessaging.BungeeCord {
			return false
		}
		h := bungeechannel.Handler{Proxy: bungeeProxy{p}, Permissions: st.cfg.PluginMessaging.BungeeCordPermissions}
		from := bungeechannel.Player{Name: pl.name, UUID: pl.uuid, Server: b.Server, Addr: pl.client}
		op, reply, err := h.Handle(p.ctx, from, data)
		if err != nil {
			p.log.Debug("bungeecord channel request not carried out", "player", pl.name, "server", b.Server, "op", op, "err", err)
		}
		if reply != nil {
			if err := s.ToBackend(b, channel, reply); err != nil {
				p.log.Debug("bungeecord channel reply not delivered", "player", pl.name, "err", err)
			}
		}
		return true // the channel is the proxy's: never shown to the client
	}
}

// bungeeProxy is the proxy as the BungeeCord channel sees it.
type bungeeProxy struct{ p *moves }

func channelPlayer(pl *onlinePlayer) bungeechannel.Player {
	srv, _ := pl.where()
	return bungeechannel.Player{Name: pl.name, UUID: pl.uuid, Server: srv.id, Addr: pl.client}
}

func (b bungeeProxy) Player(name string) (bungeechannel.Player, bool) {
	pl := b.p.roster.find(name)
	if pl == nil {
		return bungeechannel.Player{}, false
	}
	return channelPlayer(pl), true
}

func (b bungeeProxy) Players(server string) []bungeechannel.Player {
	var out []bungeechannel.Player
	for _, pl := range b.p.roster.all() {
		if cp := channelPlayer(pl); server == "" || cp.Server == server {
			out = append(out, cp)
		}
	}
	slices.SortFunc(out, func(x, y bungeechannel.Player) int { return strings.Compare(x.Name, y.Name) })
	return out
}

func (b bungeeProxy) Count(server string) int {
	st := b.p.state.Load()
	if server == "" {
		n := 0
		for _, srv := range st.servers {
			n += int(srv.players.Load())
		}
		return n
	}
	if srv := st.servers[server]; srv != nil {
		return int(srv.players.Load())
	}
	return 0
}

func (b bungeeProxy) Servers() []bungeechannel.Server {
	st := b.p.state.Load()
	out := make([]bungeechannel.Server, 0, len(st.cfg.Servers))
	for _, sc := range st.cfg.Servers {
		s := bungeechannel.Server{ID: sc.ID}
		if len(sc.Addresses) > 0 {
			s.Addr = sc.Addresses[0].Address
		}
		out = append(out, s)
	}
	return out
}

// Send starts the move and returns: it is called from the requesting backend's
// relay loop, which the move itself must not wait on. The move is one of the
// proxy's goroutines (shutdown waits for it).
func (b bungeeProxy) Send(ctx context.Context, player, server string) error {
	pl := b.p.roster.find(player)
	if pl == nil {
		return bungeechannel.ErrUnknownPlayer
	}
	if b.p.state.Load().servers[server] == nil {
		return bungeechannel.ErrUnknownServer
	}
	b.p.goroutine(func() {
		if _, err := b.p.send(pl.name, server, whyPlugin, pass{}); err != nil {
			b.p.log.Info("a backend's Connect request failed", "player", player, "server", server, "err", err)
		}
	})
	return nil
}

func (b bungeeProxy) Kick(player, reason string, raw bool) error {
	pl := b.p.roster.find(player)
	if pl == nil {
		return bungeechannel.ErrUnknownPlayer
	}
	if raw {
		reason = mc.DescriptionText(json.RawMessage(reason))
	}
	if reason == "" {
		reason = "Kicked by an operator"
	}
	b.p.log.Info("player kicked through the BungeeCord channel", "player", pl.name, "reason", reason)
	b.p.players.handleOf(pl, "").Kick(reason)
	return nil
}

func (b bungeeProxy) Message(player, text string, raw bool) error {
	return errors.New("chat messages from the BungeeCord channel are not delivered by this build")
}

func (b bungeeProxy) ForwardTo(server string, payload []byte) error {
	for _, pl := range b.p.roster.all() {
		if srv, _ := pl.where(); srv.id != server || pl.sess == nil {
			continue
		}
		cur := pl.sess.Current()
		if cur == nil {
			continue
		}
		return pl.sess.ToBackend(cur, bungeechannel.ChannelFor(mc.Protocol(pl.protocol)), payload)
	}
	return bungeechannel.ErrNoPlayers
}

func (b bungeeProxy) ForwardToPlayer(player string, payload []byte) error {
	pl := b.p.roster.find(player)
	if pl == nil {
		return bungeechannel.ErrUnknownPlayer
	}
	if pl.sess == nil {
		return fmt.Errorf("%s is on a passthrough server", pl.name)
	}
	cur := pl.sess.Current()
	if cur == nil {
		return errors.New("the player is between servers")
	}
	return pl.sess.ToBackend(cur, bungeechannel.ChannelFor(mc.Protocol(pl.protocol)), payload)
}

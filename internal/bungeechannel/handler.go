package bungeechannel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/infrarust-go/infrarust/internal/config"
)

// Errors Handle wraps, so the caller can tell a refused request from a broken
// one in its debug line.
var (
	// ErrDenied: [plugin_messaging.bungeecord_permissions] does not allow the operation.
	ErrDenied = errors.New("denied by [plugin_messaging.bungeecord_permissions]")
	// ErrUnknownPlayer: the request names a player who is not online.
	ErrUnknownPlayer = errors.New("no such player online")
	// ErrUnknownServer: the request names a server the proxy does not have.
	ErrUnknownServer = errors.New("no such server")
	// ErrNoPlayers is what Proxy.ForwardTo returns when nobody is on the
	// server to carry the message (BungeeCord would queue it; this proxy drops it).
	ErrNoPlayers = errors.New("no player on the server to carry the message")
)

// All is the target that means every player (Message) or the whole proxy
// (PlayerCount, PlayerList, Forward); Online is Forward's other broadcast.
const (
	All    = "ALL"
	Online = "ONLINE"
)

// Player is one online player as the channel reports them.
type Player struct {
	Name string
	// UUID in either form; replies carry it without dashes.
	UUID string
	// Server is the id of the server the player is on.
	Server string
	// Addr is the client's address as the proxy sees it (after PROXY protocol).
	Addr netip.AddrPort
}

// Server is one server the channel can name.
type Server struct {
	ID string
	// Addr is "host:port" of the server's first address, for ServerIP.
	Addr string
}

// Proxy is what the Handler needs from the running proxy. Name lookups are
// case-insensitive, as BungeeCord's are. Methods are called on the goroutine
// that read the request (a backend's relay loop): Send must start the move and
// return, not wait for it, or the move could wait on that very loop.
type Proxy interface {
	// Player finds an online player by name.
	Player(name string) (Player, bool)
	// Players lists the players on server, or on every server for "".
	Players(server string) []Player
	// Count is len(Players(server)) without building the list: scoreboards
	// poll PlayerCount every few seconds.
	Count(server string) int
	// Servers lists the servers backends may name, in the order GetServers shows.
	Servers() []Server
	// Send moves player to server, balanced like a login (Connect, ConnectOther).
	Send(ctx context.Context, player, server string) error
	// Kick disconnects player; reason is legacy text (§ codes), or a JSON chat
	// component when raw.
	Kick(player, reason string, raw bool) error
	// Message shows text in player's chat; legacy text, or JSON when raw.
	Message(player, text string, raw bool) error
	// ForwardTo delivers payload as a channel message to the backend of one
	// player on server (ErrNoPlayers when there is none). payload is shared
	// between calls and must not be modified.
	ForwardTo(server string, payload []byte) error
	// ForwardToPlayer delivers payload as a channel message to the backend the
	// player is on. payload must not be modified.
	ForwardToPlayer(player string, payload []byte) error
}

// Handler carries out backends' requests. The zero value refuses everything;
// build one per configuration with the operator's permissions.
type Handler struct {
	Proxy       Proxy
	Permissions config.ChannelPermissions
}

// Allowed reports whether the permissions let a backend use op.
func Allowed(p config.ChannelPermissions, op Op) bool {
	switch op {
	case OpConnect:
		return p.Connect
	case OpConnectOther:
		return p.ConnectOther
	case OpIP:
		return p.IP
	case OpIPOther:
		return p.IPOther
	case OpPlayerCount:
		return p.PlayerCount
	case OpPlayerList:
		return p.PlayerList
	case OpGetServers:
		return p.GetServers
	case OpGetServer:
		return p.GetServer
	case OpGetPlayerServer:
		return p.GetPlayerServer
	case OpUUID:
		return p.UUID
	case OpUUIDOther:
		return p.UUIDOther
	case OpServerIP:
		return p.ServerIP
	case OpMessage:
		return p.Message
	case OpMessageRaw:
		return p.MessageRaw
	case OpKickPlayer:
		return p.KickPlayer
	case OpKickPlayerRaw:
		return p.KickPlayerRaw
	case OpForward:
		return p.Forward
	case OpForwardToPlayer:
		return p.ForwardToPlayer
	}
	return false
}

// Handle carries out one request that the backend of player from (whose
// Server is that backend's server) sent on the channel. It returns the
// subcommand (OpUnknown when unreadable), the reply payload to send back to
// that backend on the channel the request came on (nil: nothing to send), and
// why the request was dropped or only partly done, for a debug log line. A
// request is never passed on to the client, answered or not.
func (h *Handler) Handle(ctx context.Context, from Player, payload []byte) (Op, []byte, error) {
	req, err := DecodeRequest(payload)
	if err != nil {
		return req.Op, nil, err
	}
	if !Allowed(h.Permissions, req.Op) {
		return req.Op, nil, fmt.Errorf("%s: %w (set %s = true there to allow it)", req.Op, ErrDenied, req.Op.Key())
	}
	if h.Proxy == nil {
		return req.Op, nil, fmt.Errorf("%s: no proxy to act on", req.Op)
	}
	reply, err := h.do(ctx, from, req)
	if err != nil {
		return req.Op, nil, fmt.Errorf("%s: %w", req.Op, err)
	}
	if reply == nil {
		return req.Op, nil, nil
	}
	out, err := reply.AppendTo(nil)
	if err != nil {
		return req.Op, nil, err
	}
	return req.Op, out, nil
}

// do acts on a decoded, allowed request and says what to answer (nil: nothing).
func (h *Handler) do(ctx context.Context, from Player, req Request) (*Reply, error) {
	px := h.Proxy
	switch req.Op {
	case OpConnect, OpConnectOther:
		who := from.Name
		if req.Op == OpConnectOther {
			pl, err := h.player(req.Player)
			if err != nil {
				return nil, err
			}
			who = pl.Name
		}
		srv, err := h.server(req.Server)
		if err != nil {
			return nil, err
		}
		return nil, px.Send(ctx, who, srv.ID)

	case OpIP:
		host, port, err := hostPort(from.Addr)
		if err != nil {
			return nil, err
		}
		return &Reply{Op: OpIP, Host: host, Port: port}, nil
	case OpIPOther:
		pl, err := h.player(req.Player)
		if err != nil {
			return nil, err
		}
		host, port, err := hostPort(pl.Addr)
		if err != nil {
			return nil, err
		}
		return &Reply{Op: OpIPOther, Player: pl.Name, Host: host, Port: port}, nil

	case OpPlayerCount, OpPlayerList:
		name, scope := All, ""
		if req.Server != All {
			srv, err := h.server(req.Server)
			if err != nil {
				return nil, err
			}
			name, scope = srv.ID, srv.ID
		}
		if req.Op == OpPlayerCount {
			return &Reply{Op: OpPlayerCount, Server: name, Count: px.Count(scope)}, nil
		}
		players := px.Players(scope)
		names := make([]string, len(players))
		for i, pl := range players {
			names[i] = pl.Name
		}
		return &Reply{Op: OpPlayerList, Server: name, List: names}, nil

	case OpGetServers:
		servers := px.Servers()
		ids := make([]string, len(servers))
		for i, s := range servers {
			ids[i] = s.ID
		}
		return &Reply{Op: OpGetServers, List: ids}, nil
	case OpGetServer:
		return &Reply{Op: OpGetServer, Server: from.Server}, nil
	case OpGetPlayerServer:
		// BungeeCord answers even for a player who is not online: with "".
		server := ""
		if pl, ok := px.Player(req.Player); ok {
			server = pl.Server
		}
		return &Reply{Op: OpGetPlayerServer, Player: req.Player, Server: server}, nil

	case OpUUID:
		return &Reply{Op: OpUUID, UUID: undashed(from.UUID)}, nil
	case OpUUIDOther:
		pl, err := h.player(req.Player)
		if err != nil {
			return nil, err
		}
		return &Reply{Op: OpUUIDOther, Player: pl.Name, UUID: undashed(pl.UUID)}, nil

	case OpServerIP:
		srv, err := h.server(req.Server)
		if err != nil {
			return nil, err
		}
		host, portText, err := net.SplitHostPort(srv.Addr)
		if err != nil {
			return nil, fmt.Errorf("server %s has no usable address %q: %w", srv.ID, srv.Addr, err)
		}
		port, err := strconv.ParseUint(portText, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("server %s address %q: bad port: %w", srv.ID, srv.Addr, err)
		}
		return &Reply{Op: OpServerIP, Server: srv.ID, Host: host, Port: int(port)}, nil

	case OpMessage, OpMessageRaw, OpKickPlayer, OpKickPlayerRaw:
		raw := req.Op == OpMessageRaw || req.Op == OpKickPlayerRaw
		if raw && !json.Valid([]byte(req.Text)) {
			return nil, fmt.Errorf("text is not a JSON chat component: %w", ErrMalformed)
		}
		if req.Op == OpKickPlayer || req.Op == OpKickPlayerRaw {
			pl, err := h.player(req.Player)
			if err != nil {
				return nil, err
			}
			return nil, px.Kick(pl.Name, req.Text, raw)
		}
		if req.Player == All {
			var errs []error
			for _, pl := range px.Players("") {
				if err := px.Message(pl.Name, req.Text, raw); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", pl.Name, err))
				}
			}
			return nil, errors.Join(errs...)
		}
		pl, err := h.player(req.Player)
		if err != nil {
			return nil, err
		}
		return nil, px.Message(pl.Name, req.Text, raw)

	case OpForward, OpForwardToPlayer:
		payload, err := AppendForwarded(nil, req.Channel, req.Data)
		if err != nil {
			return nil, err
		}
		if req.Op == OpForwardToPlayer {
			pl, err := h.player(req.Player)
			if err != nil {
				return nil, err
			}
			return nil, px.ForwardToPlayer(pl.Name, payload)
		}
		if req.Server != All && req.Server != Online {
			srv, err := h.server(req.Server)
			if err != nil {
				return nil, err
			}
			return nil, px.ForwardTo(srv.ID, payload)
		}
		// Every other server: the asking one already has the data. A server
		// nobody is on cannot be reached, which ONLINE means anyway.
		var errs []error
		for _, srv := range px.Servers() {
			if srv.ID == from.Server {
				continue
			}
			if err := px.ForwardTo(srv.ID, payload); err != nil && !errors.Is(err, ErrNoPlayers) {
				errs = append(errs, fmt.Errorf("%s: %w", srv.ID, err))
			}
		}
		return nil, errors.Join(errs...)
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownSubchannel, req.Op)
}

func (h *Handler) player(name string) (Player, error) {
	pl, ok := h.Proxy.Player(name)
	if !ok {
		return Player{}, fmt.Errorf("%w: %q", ErrUnknownPlayer, truncate(name, 64))
	}
	return pl, nil
}

// server finds a server by id, case-insensitively as BungeeCord does; replies
// carry the id as configured.
func (h *Handler) server(name string) (Server, error) {
	for _, s := range h.Proxy.Servers() {
		if strings.EqualFold(s.ID, name) {
			return s, nil
		}
	}
	return Server{}, fmt.Errorf("%w: %q", ErrUnknownServer, truncate(name, 64))
}

// hostPort is an address as IP and IPOther write it: an IPv4 client is never
// shown as ::ffff:a.b.c.d, and zones stay out, as in the forwarding handshake.
func hostPort(a netip.AddrPort) (string, int, error) {
	if !a.IsValid() {
		return "", 0, errors.New("the player's address is unknown")
	}
	return a.Addr().Unmap().WithZone("").String(), int(a.Port()), nil
}

func undashed(uuid string) string { return strings.ReplaceAll(uuid, "-", "") }

package proxy

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/player"
)

// handle is an online player as commands and plugins see him (player.Player):
// what they may know of him and do to him, and nothing of the proxy's insides.
// Its Connect goes through connect, the one route's typed front.
type handle struct {
	p    *players
	pl   *onlinePlayer
	perm func(string) bool // a PermissionsSetup handler's answer; nil: roles
	why  string            // the moves' reason: whyPlugin unless a built-in says
}

var _ player.Player = (*handle)(nil)

// handleOf is pl's handle for a caller moving him for why.
func (p *players) handleOf(pl *onlinePlayer, why string) *handle {
	h := &handle{p: p, pl: pl, why: why}
	if pl.cmds != nil {
		h.perm = pl.cmds.src.perm
	}
	return h
}

func (h *handle) ID() uint64      { return h.pl.origin.ev.conn.ID }
func (h *handle) Name() string    { return h.pl.name }
func (h *handle) UUID() string    { return h.pl.uuid }
func (h *handle) Protocol() int32 { return h.pl.protocol }

func (h *handle) Server() string {
	if srv, _ := h.pl.where(); srv != nil && (h.pl.sess == nil || !h.pl.sess.Between()) {
		return srv.id
	}
	return ""
}

func (h *handle) Proven() player.Proof {
	pr := h.pl.proven()
	return player.Proof{Mojang: pr.mojang, Password: pr.account != "", BotCheck: pr.verified}
}

func (h *handle) HasPermission(perm string) bool {
	if h.perm != nil {
		return h.perm(perm)
	}
	return h.p.cmds.allows(h.pl, perm)
}

func (h *handle) Tell(text string) error {
	s := h.pl.sess
	if s == nil {
		return player.ErrNotIntercepted
	}
	if config.IsJSONMessage(text) {
		return s.TellComponent(json.RawMessage(strings.TrimSpace(text)))
	}
	return s.Tell(text)
}

// component is a [messages]-style text (legacy §, or JSON) as a component.
func component(text string) json.RawMessage {
	if config.IsJSONMessage(text) {
		return json.RawMessage(strings.TrimSpace(text))
	}
	return mc.TextComponent(text)
}

// ticks is d in game ticks (20 a second).
func ticks(d time.Duration) int32 { return int32(d / (50 * time.Millisecond)) }

func (h *handle) Title(t player.Title) error {
	s := h.pl.sess
	if s == nil {
		return player.ErrNotIntercepted
	}
	title := component(t.Title)
	if t.Title == "" {
		title = mc.TextComponent("") // a subtitle shows only under a title
	}
	return s.ShowTitle(
		mc.Title{Action: mc.TitleTimes, FadeIn: ticks(t.FadeIn), Stay: ticks(t.Stay), FadeOut: ticks(t.FadeOut)},
		mc.Title{Action: mc.TitleSubtitle, Text: component(t.Subtitle)},
		mc.Title{Action: mc.TitleShow, Text: title},
	)
}

func (h *handle) ActionBar(text string) error {
	s := h.pl.sess
	if s == nil {
		return player.ErrNotIntercepted
	}
	return s.ShowTitle(mc.Title{Action: mc.TitleActionBar, Text: component(text)})
}

func (h *handle) SendPluginMessage(channel string, data []byte) error {
	s := h.pl.sess
	if s == nil {
		return player.ErrNotIntercepted
	}
	payload, err := mc.PluginMessage{Channel: channel, Data: data}.AppendPayload(nil, s.Client().Protocol)
	if err != nil {
		return err
	}
	return s.SendToClient(mc.PacketPluginMessage, payload)
}

func (h *handle) Kick(reason string) { h.pl.disconnect(reason) }

func (h *handle) Connect(ctx context.Context, server string) player.ConnectResult {
	if err := ctx.Err(); err != nil {
		return player.ConnectResult{Status: player.Failed, Server: server, Reason: err.Error()}
	}
	res, _ := h.p.moves.connect(h.pl, server, h.why, pass{})
	return res
}

// tell shows a [messages] text (legacy, or a JSON component) to a player the
// proxy speaks to (a passthrough player is not told).
func (p *players) tell(pl *onlinePlayer, text string) { _ = p.handleOf(pl, "").Tell(text) }

// fill puts values in a [messages] template: {name} -> value. In a JSON template
// the values are escaped as JSON string content.
func fill(template string, kv ...string) string {
	isJSON := config.IsJSONMessage(template)
	return config.MessagePlaceholder.ReplaceAllStringFunc(template, func(ph string) string {
		key := ph[1 : len(ph)-1]
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == key {
				if isJSON {
					b, _ := json.Marshal(kv[i+1])
					return string(b[1 : len(b)-1])
				}
				return kv[i+1]
			}
		}
		return ph
	})
}

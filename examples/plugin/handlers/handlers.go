// Package handlers holds the example's event handlers, apart from main so that
// they can be tested without starting a proxy.
package handlers

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust"
)

// Config is what the handlers need from the operator.
type Config struct {
	// Blocked are player names refused at login (case-insensitive).
	Blocked []string
	// Fallback is the server a player is sent to when theirs cannot take them; "" turns it off.
	Fallback string
	// Log receives the session summaries.
	Log *slog.Logger
	// Discord is the invite /discord shows; "" leaves the command out.
	Discord string
	// BlockedChannels are plugin channels a client may not open (a world
	// downloader's "wdl:init", for example): their messages never reach a server.
	BlockedChannels []string
}

// Register puts the handlers in r.
func Register(r *infrarust.Registry, c Config) {
	blocked := map[string]bool{}
	for _, name := range c.Blocked {
		blocked[strings.ToLower(name)] = true
	}

	// Refuse blocked players once their final profile is known (after Mojang
	// authentication on client_only servers).
	infrarust.On(r, "blocklist", func(ctx context.Context, e *infrarust.Login) {
		if blocked[strings.ToLower(e.Profile.Name)] {
			e.Deny("§cYou are not allowed on this network")
		}
	})

	// A server that is down or full sends its players to the fallback instead of
	// disconnecting them; the fallback itself failing ends the login as usual.
	if c.Fallback != "" {
		infrarust.On(r, "fallback", func(ctx context.Context, e *infrarust.KickedFromServer) {
			if e.Server != c.Fallback && e.Cause != infrarust.CauseKicked {
				e.Redirect(c.Fallback)
			}
		}, infrarust.Timeout(100*time.Millisecond))
	}

	// /discord: a command for everyone, the same type the proxy's own use.
	if c.Discord != "" {
		infrarust.RegisterCommand(r, &infrarust.Command{
			Name: "discord", Description: "the network's Discord invite",
			Run: func(ctx context.Context, inv infrarust.CommandInvocation) error {
				inv.Source.Tell("§9Join us on Discord: §f" + c.Discord)
				return nil
			},
		})
	}

	// A packet filter: plugin messages on a blocked channel are dropped on
	// their way to the server.
	if len(c.BlockedChannels) > 0 {
		deny := map[string]bool{}
		for _, ch := range c.BlockedChannels {
			deny[ch] = true
		}
		infrarust.OnPacket(r, "channel-block", infrarust.Serverbound, []string{"plugin_message"}, func(p *infrarust.Packet) {
			if ch, ok := channelOf(p.Payload); ok && deny[ch] {
				p.Drop()
			}
		})
	}

	if c.Log != nil {
		infrarust.On(r, "session-log", func(ctx context.Context, e *infrarust.Disconnect) {
			c.Log.Info("session ended", "player", e.Profile.Name, "server", e.Server,
				"outcome", e.Outcome, "duration", e.Duration.Round(time.Second))
		})
	}
}

// channelOf reads a plugin message's channel: a VarInt length and that many
// bytes, at the start of the payload.
func channelOf(payload []byte) (string, bool) {
	n, shift, i := 0, 0, 0
	for ; i < len(payload) && i < 5; i++ {
		b := payload[i]
		n |= int(b&0x7f) << shift
		shift += 7
		if b < 0x80 {
			i++
			if n < 0 || i+n > len(payload) {
				return "", false
			}
			return string(payload[i : i+n]), true
		}
	}
	return "", false
}

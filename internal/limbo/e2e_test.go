package limbo_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/limbo/limbotest"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// switchCleanup is what a switch sends to clear the old server's state; the
// real client must parse every packet of it.
func switchCleanup(p mc.Protocol) ([]mc.Packet, error) {
	var pks []mc.Packet
	add := func(pk mc.Packet, err error) error {
		if err == nil {
			pks = append(pks, pk)
		}
		return err
	}
	id := [16]byte{0xB0, 0x55}
	if p.AtLeast(mc.V1_9) {
		if err := add(mc.RemoveBossBar(p, id)); err != nil {
			return nil, err
		}
	}
	players, err := mc.RemovePlayers(p, [][16]byte{id}, []string{"Ghost"})
	if err != nil {
		return nil, err
	}
	pks = append(pks, players...)
	if err := add(mc.RemoveObjective(p, "sidebar")); err != nil {
		return nil, err
	}
	if err := add(mc.RemoveTeam(p, "red")); err != nil {
		return nil, err
	}
	if p.AtLeast(mc.V1_8) {
		if err := add(mc.TabListHeaderFooter{}.Packet(p)); err != nil {
			return nil, err
		}
		if err := add(mc.Title{Action: mc.TitleReset}.Packet(p)); err != nil {
			return nil, err
		}
	}
	chat, err := mc.SystemChat{Message: mc.TextComponent("Your server went away; waiting in limbo")}.AppendPayload(nil, p)
	if err != nil {
		return nil, err
	}
	return append(pks, mc.Packet{Type: mc.PacketSystemChat, Payload: chat}), nil
}

// limboScript is the life of one e2e player: into the limbo fresh from login,
// held with a countdown, released; the old server's state cleared and back
// into the limbo as a player coming from a server; held again; kicked.
func limboScript(hold time.Duration) limbotest.Script {
	return func(ctx context.Context, p *limbo.Player, name string) error {
		deadline := func() { _ = p.Net.SetDeadline(time.Now().Add(10 * time.Second)) }
		deadline()
		if err := limbo.Enter(p, limbo.World{}); err != nil {
			return fmt.Errorf("first enter: %w", err)
		}
		start := time.Now()
		msg := func() limbo.Message {
			left := hold - time.Since(start).Truncate(time.Second)
			return limbo.Message{
				Title:     mc.TextComponent("Waking the server…"),
				Subtitle:  mc.TextComponent(fmt.Sprintf("%d s", int(left.Seconds()))),
				ActionBar: mc.TextComponent("You are #3 in the queue"),
			}
		}
		opts := limbo.HoldOptions{Message: msg, KeepAliveInterval: 500 * time.Millisecond, KeepAliveTimeout: 5 * time.Second}
		hctx, cancel := context.WithTimeout(ctx, hold)
		err := limbo.Hold(hctx, p, opts)
		cancel()
		if err != nil {
			return fmt.Errorf("first hold: %w", err)
		}
		deadline()
		cleanup, err := switchCleanup(p.Protocol())
		if err != nil {
			return err
		}
		if err := limbo.Send(p, cleanup...); err != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
		if err := limbo.Enter(p, limbo.World{Dimension: limbo.Overworld}); err != nil {
			return fmt.Errorf("second enter: %w", err)
		}
		hctx, cancel = context.WithTimeout(ctx, hold)
		err = limbo.Hold(hctx, p, opts)
		cancel()
		if err != nil {
			return fmt.Errorf("second hold: %w", err)
		}
		deadline()
		return limbo.Kick(p, "Bye from the limbo, "+name)
	}
}

// A real client (node-minecraft-protocol) of each version family logs in,
// stands in the limbo for 6 s across two entries (fresh, then as if its
// server went away), answers the keep-alives, parses every title, cleanup
// and world packet, and reads the final kick.
func TestLimboWithRealClients(t *testing.T) {
	h := nmp.Setup(t)
	var mu sync.Mutex
	results := map[string]error{}
	srv, err := limbotest.Listen("127.0.0.1:0", limbotest.Options{
		Threshold: 256,
		Script:    limboScript(3 * time.Second),
		Done: func(name string, err error) {
			mu.Lock()
			results[name] = err
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)

	versions := []string{"1.7.10", "1.8.8", "1.12.2", "1.15.2", "1.16.5", "1.17.1", "1.18.2", "1.19.4", "1.20.1", "1.20.4", "1.21.1", "1.21.4"}
	sem := make(chan struct{}, 3)
	for i, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			name := fmt.Sprintf("Limbo%d", i)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			r, err := h.Login(ctx, nmp.LoginOptions{
				Addr: srv.Addr, Version: v, Username: name, UntilKicked: true, Timeout: 60 * time.Second,
			})
			if err != nil {
				t.Fatalf("client: %v", err)
			}
			if !r.OK || r.PlayMS == nil || !r.Kicked {
				t.Fatalf("client did not play and get kicked: %s", r.Raw)
			}
			if want := "Bye from the limbo, " + name; r.KickReason != want {
				t.Errorf("kick reason %q, want %q", r.KickReason, want)
			}
			// 6 s at one keep-alive per 500 ms, answered (a missed answer
			// would have timed the hold out).
			t.Logf("%s", r.Raw)
			if r.KeepAlives < 8 {
				t.Errorf("client answered %d keep-alives", r.KeepAlives)
			}
			if r.ElapsedMS < 6000 {
				t.Errorf("client was held only %d ms", r.ElapsedMS)
			}
			mu.Lock()
			serr, ok := results[name]
			mu.Unlock()
			if !ok {
				// The script reports once the client has closed; wait for it.
				deadline := time.Now().Add(10 * time.Second)
				for !ok && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
					mu.Lock()
					serr, ok = results[name]
					mu.Unlock()
				}
			}
			if !ok || serr != nil {
				t.Errorf("limbo side: reported %v, %v", ok, serr)
			}
		})
	}
}

package limbo_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/forwarding"
	"github.com/infrarust-go/infrarust/internal/limbo"
	"github.com/infrarust-go/infrarust/internal/limbo/limbotest"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/session"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// exitScript holds the player in the limbo while it logs in to the backend
// at addr, then moves it there the way a session will: 1.20.2+ through start
// configuration and the backend's own configuration, older versions through
// the backend's join game rewritten by Rejoin; then it relays both ways.
func exitScript(backend string) limbotest.Script {
	return func(ctx context.Context, p *limbo.Player, name string) error {
		_ = p.Net.SetDeadline(time.Now().Add(20 * time.Second))
		if err := limbo.Enter(p, limbo.World{}); err != nil {
			return fmt.Errorf("enter: %w", err)
		}
		// Log in to the backend while the player stands in the limbo.
		type login struct {
			conn *mc.Conn
			nc   net.Conn
			err  error
		}
		ready := make(chan login, 1)
		go func() {
			nc, err := net.DialTimeout("tcp", backend, 10*time.Second)
			if err != nil {
				ready <- login{err: err}
				return
			}
			_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
			host, port, _ := net.SplitHostPort(backend)
			pn, _ := strconv.Atoi(port)
			bc := mc.NewConn(bufio.NewReader(nc), nc, zlibForTests)
			out, err := session.BackendLogin{
				Registry:  p.Registry,
				Handshake: mc.Handshake{ProtocolVersion: int32(p.Protocol()), ServerAddress: host, ServerPort: uint16(pn), NextState: mc.StateLogin},
				Player:    forwarding.Player{Profile: session.OfflineProfile(name)},
			}.Run(bc)
			if err == nil && out.Kick != "" {
				err = errors.New("backend refused: " + out.Kick)
			}
			ready <- login{bc, nc, err}
		}()
		hctx, cancel := context.WithCancel(ctx)
		held := make(chan error, 1)
		go func() {
			held <- limbo.Hold(hctx, p, limbo.HoldOptions{
				KeepAliveInterval: 300 * time.Millisecond,
				Message: func() limbo.Message {
					return limbo.Message{Title: mc.TextComponent("Connecting…"), ActionBar: mc.TextComponent("almost there")}
				},
			})
		}()
		// Stand in the limbo for a while even when the backend is quick.
		time.Sleep(1500 * time.Millisecond)
		b := <-ready
		cancel()
		if err := <-held; err != nil {
			return fmt.Errorf("hold: %w", err)
		}
		if b.err != nil {
			return b.err
		}
		defer b.nc.Close()
		_ = p.Net.SetDeadline(time.Now().Add(20 * time.Second))
		if p.Protocol().AtLeast(mc.V1_20_2) {
			// The backend is in configuration after the login acknowledgement.
			if err := limbo.StartConfiguration(p); err != nil {
				return fmt.Errorf("start configuration: %w", err)
			}
			if p.ClientInformation != nil {
				id, _ := p.Registry.ID(mc.ConfigState, mc.Serverbound, mc.PacketClientInformation)
				if err := b.conn.WritePacket(id, p.ClientInformation); err != nil {
					return err
				}
			}
		} else {
			// The backend's first play packet is its join game.
			f, err := b.conn.ReadFrame()
			if err != nil {
				return err
			}
			if ty, _ := p.Registry.Type(mc.PlayState, mc.Clientbound, f.ID); ty != mc.PacketJoinGame {
				return fmt.Errorf("backend's first play packet is %v", ty)
			}
			jg, err := mc.DecodeJoinGame(f.Payload, p.Protocol())
			if err != nil {
				return err
			}
			if err := limbo.Rejoin(p, jg); err != nil {
				return err
			}
		}
		_ = p.Net.SetDeadline(time.Time{})
		_ = b.nc.SetDeadline(time.Time{})
		state := mc.PlayState
		if p.Protocol().AtLeast(mc.V1_20_2) {
			state = mc.ConfigState
		}
		client := &session.Client{Conn: p.Conn, Registry: p.Registry, Protocol: p.Protocol(), State: state}
		session.New(client, p.Net, nil, nil).Run(&session.Backend{Side: session.Side{Conn: b.conn, Net: b.nc}, Release: func() { b.nc.Close() }})
		return nil
	}
}

var zlibForTests = func() *mc.Zlib {
	z, err := mc.NewZlib(1)
	if err != nil {
		panic(err)
	}
	return z
}()

// A real client held in the limbo is moved into a real backend of its
// version (node-minecraft-protocol's server) without a disconnect: it ends
// up playing there and reads that backend's kick.
func TestLimboExitIntoBackend(t *testing.T) {
	h := nmp.Setup(t)
	versions := []string{"1.8.8", "1.12.2", "1.16.5", "1.19.4", "1.20.1", "1.20.4", "1.21.1", "1.21.4"}
	sem := make(chan struct{}, 3)
	for i, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			backend := h.StartServer(t, nmp.ServerOptions{Version: v, Kick: "Welcome to the backend, and goodbye", CompressionThreshold: 64})
			done := make(chan error, 1)
			srv, err := limbotest.Listen("127.0.0.1:0", limbotest.Options{
				Threshold: 256, Script: exitScript(backend.Addr),
				Done: func(_ string, err error) { done <- err },
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Close)
			name := "Exit" + strconv.Itoa(i)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			r, err := h.Login(ctx, nmp.LoginOptions{Addr: srv.Addr, Version: v, Username: name, UntilKicked: true, Timeout: 60 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if !r.OK || r.KickReason != "Welcome to the backend, and goodbye" {
				t.Fatalf("client did not reach the backend: %s", r.Raw)
			}
			if _, err := backend.Wait(ctx, nmp.Match("join", name)); err != nil {
				t.Errorf("the backend never saw %s join: %v", name, err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("limbo side: %v", err)
				}
			case <-ctx.Done():
				t.Error("limbo side did not finish")
			}
		})
	}
}

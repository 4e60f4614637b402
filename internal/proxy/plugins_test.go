package proxy

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/mc"
)

// Transport filters decide on every connection before anything of it is read:
// Continue lets a ping through; Reject, a panic and an overrun each close the
// connection unanswered; a filter that let a connection through is told when
// it closes, even when a later filter rejected it.
func TestTransportFilters(t *testing.T) {
	backend := startBackend(t, fakemc.Options{MOTD: "behind filters"})
	var mode atomic.Value // "continue", "reject", "panic", "hang"
	mode.Store("continue")
	seen := make(chan *hooks.TransportConn, 16)
	closed := make(chan uint64, 16)
	r := hooks.NewRegistry()
	hooks.OnTransport(r, hooks.TransportFilter{
		Name: "first",
		Filter: func(ctx context.Context, c *hooks.TransportConn) hooks.TransportVerdict {
			seen <- c
			return hooks.TransportContinue
		},
		Closed: func(c *hooks.TransportConn) { closed <- c.ID },
	})
	hooks.OnTransport(r, hooks.TransportFilter{
		Name: "second",
		Filter: func(ctx context.Context, c *hooks.TransportConn) hooks.TransportVerdict {
			switch mode.Load() {
			case "reject":
				return hooks.TransportReject
			case "panic":
				panic("filter bug")
			case "hang":
				<-ctx.Done()
				time.Sleep(50 * time.Millisecond)
			}
			return hooks.TransportContinue
		},
	})
	d, err := hooks.New(hooks.Options{Handlers: r})
	if err != nil {
		t.Fatal(err)
	}
	p := startProxyOpts(t, func(c *config.Config) { c.Events.TransportFilterTimeout = config.Duration(100 * time.Millisecond) },
		Options{Hooks: d}, newServer("s", []string{"filtered.test"}, backend.Addr()))

	if st := pingVia(t, p.addr, "filtered.test"); mc.DescriptionText(st.Description) != "behind filters" {
		t.Fatalf("a connection both filters let through was not served: %+v", st)
	}
	first := <-seen
	if !first.Client.IsLoopback() || first.Remote.Addr() != first.Client || !first.Local.IsValid() || first.Accepted.IsZero() {
		t.Errorf("the filter saw %+v", first)
	}
	if id := waitID(t, closed); id != first.ID {
		t.Errorf("Closed told id %d, want %d", id, first.ID)
	}

	for _, m := range []string{"reject", "panic", "hang"} {
		mode.Store(m)
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _, err = mc.QueryStatus(c, "filtered.test", 25565, 767)
		c.Close()
		if err == nil {
			t.Errorf("%s: the connection was served", m)
		}
		c1 := <-seen
		if id := waitID(t, closed); id != c1.ID {
			t.Errorf("%s: the first filter was not told its connection closed (%d, want %d)", m, id, c1.ID)
		}
	}
	if n := p.Counters().Rejected; n != 3 {
		t.Errorf("rejected: %d, want the 3 the filters refused", n)
	}
}

func waitID(t *testing.T, ch <-chan uint64) uint64 {
	t.Helper()
	select {
	case id := <-ch:
		return id
	case <-time.After(5 * time.Second):
		t.Fatal("Closed was never called")
		return 0
	}
}

// A GameProfileRequest handler decides the profile the backend logs in (the
// event is built only when a handler listens): the backend sees the new name.
func TestGameProfileRequestRenamesThePlayer(t *testing.T) {
	b := startPlayBackend(t, "LOBBY")
	reg := hooks.NewRegistry()
	hooks.On(reg, "rename", func(_ context.Context, e *hooks.GameProfileRequest) {
		if e.Profile.Name == "Steve" {
			e.Profile.Name = "Stevie"
		}
	})
	d, err := hooks.New(hooks.Options{Handlers: reg})
	if err != nil {
		t.Fatal(err)
	}
	tp := startProxyOpts(t, nil, Options{Hooks: d}, interceptedServer("lobby", config.ModeOffline, b.addr))
	pc := joinAndPlay(t, tp.addr, "lobby.test", "Steve")
	pc.await(t, "hello from LOBBY")
	b.mu.Lock()
	order := append([]string(nil), b.order...)
	b.mu.Unlock()
	if len(order) != 1 || order[0] != "Stevie" {
		t.Fatalf("the backend saw %q, want the handler's [Stevie]", order)
	}
}

// A real login on one bus: the player events the handlers get are on the bus
// in firing order (the SSE stream's view), and an observer registered like a
// handler sees the proxy's own announcements (player.join).
func TestOneEventSystem(t *testing.T) {
	b := startPlayBackend(t, "LOBBY")
	bus := events.NewBus()
	joined := make(chan events.Event, 4)
	reg := hooks.NewRegistry()
	hooks.Observe(reg, "joins", func(_ context.Context, e events.Event) { joined <- e }, events.PlayerJoin)
	d, err := hooks.New(hooks.Options{Handlers: reg, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	sse := bus.Subscribe(64, events.PlayerPreLogin, events.PlayerLogin, events.PlayerServerConnected)
	defer sse.Close()
	tp := startProxyOpts(t, nil, Options{Hooks: d, Bus: bus}, interceptedServer("lobby", config.ModeOffline, b.addr))
	pc := joinAndPlay(t, tp.addr, "lobby.test", "Steve")
	pc.await(t, "hello from LOBBY")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, want := range []events.Type{events.PlayerPreLogin, events.PlayerLogin, events.PlayerServerConnected} {
		ev, err := sse.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", want, err)
		}
		if ev.Type != want {
			t.Fatalf("the bus carried %s, want %s", ev.Type, want)
		}
	}
	select {
	case e := <-joined:
		if p, ok := e.Data.(events.Player); !ok || p.Username != "Steve" || p.Server != "lobby" {
			t.Fatalf("the observer saw %+v", e.Data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the observer never saw player.join")
	}
}

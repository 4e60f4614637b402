package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/tui"
)

// holdingBackend answers a login with a non-disconnect frame and then echoes, so
// the proxy keeps the session open like a real server would.
func holdingBackend(t *testing.T, name string) *fakemc.Server {
	return startFake(t, fakemc.Options{Name: name, OnLogin: func(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
		if _, err := c.Write(mc.AppendFrame(nil, 0x02, make([]byte, 17))); err != nil {
			return
		}
		_, _ = io.Copy(c, br)
	}})
}

// The operator's drain: `infrarust backends drain` with only --config keeps new
// players off the address while a live session stays, and the drain survives a
// restart with the same data dir; the CLI's error messages against the real server.
func TestE2EDrainThroughCLISurvivesRestart(t *testing.T) {
	a := holdingBackend(t, "a")
	b := startFake(t, fakemc.Options{Name: "b"})
	servers := func() *config.Server { return e2eServer("lobby", a.Addr(), b.Addr()) }
	dataDir := t.TempDir()
	s := startServe(t, dataDir, servers())

	// A session on a, held open.
	held, heldR, f := dialLogin(t, s.proxyAddr, "Holder")
	defer held.Close()
	if f.ID != 0x02 {
		t.Fatalf("held session: first packet 0x%02x, want 0x02", f.ID)
	}
	echo := func(msg string) {
		t.Helper()
		if _, err := held.Write([]byte(msg)); err != nil {
			t.Fatalf("held session write: %v", err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(heldR, got); err != nil || string(got) != msg {
			t.Fatalf("held session echo: %q, %v", got, err)
		}
	}
	echo("before the drain")
	if st := backendState(t, s.client, "lobby", a.Addr()); st.ActiveConnections != 1 {
		t.Fatalf("before the drain: %+v", st)
	}

	out, err := cli(t, "backends", "drain", "lobby", a.Addr(), "--config", s.configPath)
	if err != nil || !strings.Contains(out, "drained "+a.Addr()+" on lobby: now draining, 1 active connection(s)") {
		t.Fatalf("backends drain --config: %v\n%s", err, out)
	}
	for i := range 3 {
		name := "New" + strconv.Itoa(i)
		if got := loginTo(t, s.proxyAddr, name); got != reached("b", name) {
			t.Fatalf("login after the drain: %q, want b", got)
		}
	}
	echo("after the drain") // the existing session is untouched
	if st := backendState(t, s.client, "lobby", a.Addr()); st.State != "draining" || st.ActiveConnections != 1 {
		t.Fatalf("after the drain: %+v", st)
	}
	if n := a.Logins.Load(); n != 1 {
		t.Fatalf("drained backend saw %d logins, want only the held one", n)
	}

	// The three error messages an operator can act on, against the real server.
	if _, err := cli(t, "backends", "list", "--admin-url", s.adminURL, "--api-key", "wrong-wrong-wrong-wrong"); err == nil ||
		!strings.Contains(err.Error(), "INFRARUST_API_KEY") {
		t.Fatalf("wrong key: %v", err)
	}
	wantAddrs := "server lobby has no address 10.0.0.9:25565; addresses are: " + a.Addr() + ", " + b.Addr()
	if _, err := cli(t, "backends", "drain", "lobby", "10.0.0.9:25565", "--config", s.configPath); err == nil ||
		!strings.Contains(err.Error(), wantAddrs) {
		t.Fatalf("unknown address: %v, want %q", err, wantAddrs)
	}
	out, err = cli(t, "backends", "list", "lobby", "-o", "json", "--config", s.configPath)
	var listed admin.Backends
	if err != nil || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Backends) != 2 ||
		listed.Backends[0].State != "draining" || listed.Backends[1].State != "healthy" {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}

	held.Close()
	s.stop(t)
	if _, err := cli(t, "backends", "list", "--config", s.configPath); err == nil ||
		!strings.Contains(err.Error(), "is `infrarust serve` running?") {
		t.Fatalf("admin not running: %v", err)
	}

	// Same data dir: the drain is replayed, the generated key reused.
	s2 := startServe(t, dataDir, servers())
	if s2.key != s.key {
		t.Fatalf("key changed across a restart with the same data dir")
	}
	// Health is rebuilt from scratch on every start: nothing has tried b yet.
	out, err = cli(t, "backends", "list", "--config", s2.configPath)
	if err != nil || !containsLine(out, a.Addr(), "draining", "unknown") || !containsLine(out, b.Addr(), "unknown", "unknown") {
		t.Fatalf("backends list after the restart: %v\n%s", err, out)
	}
	if st := backendState(t, s2.client, "lobby", a.Addr()); st.State != "draining" {
		t.Fatalf("after the restart: %+v", st)
	}
	if got := loginTo(t, s2.proxyAddr, "Later"); got != reached("b", "Later") {
		t.Fatalf("login after the restart: %q, want b", got)
	}

	if st := backendState(t, s2.client, "lobby", b.Addr()); st.State != "healthy" {
		t.Fatalf("a login through b did not prove it healthy: %+v", st)
	}
	out, err = cli(t, "backends", "enable", "lobby", a.Addr(), "--config", s2.configPath)
	if err != nil || !strings.Contains(out, "enabled "+a.Addr()+" on lobby: now unknown") {
		t.Fatalf("backends enable: %v\n%s", err, out)
	}
	c, _, f := dialLogin(t, s2.proxyAddr, "Back")
	c.Close()
	if f.ID != 0x02 || a.Logins.Load() != 2 {
		t.Fatalf("after enable the login went elsewhere: packet 0x%02x, a saw %d logins", f.ID, a.Logins.Load())
	}
}

// containsLine reports whether one line of out holds every part.
func containsLine(out string, parts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// teaDriver runs a Bubble Tea model the way tea.Program does, minus the
// terminal: commands run on goroutines, their messages are applied on the test
// goroutine, so the test can look at View between messages.
type teaDriver struct {
	m    *tui.Model
	msgs chan tea.Msg
	done chan struct{}
}

func newTeaDriver(t *testing.T, m *tui.Model) *teaDriver {
	d := &teaDriver{m: m, msgs: make(chan tea.Msg, 64), done: make(chan struct{})}
	t.Cleanup(func() {
		close(d.done)
		m.Close()
	})
	return d
}

func (d *teaDriver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() { d.post(cmd()) }()
}

func (d *teaDriver) post(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range msg {
			d.run(c)
		}
		return
	}
	select {
	case d.msgs <- msg:
	case <-d.done:
	}
}

func (d *teaDriver) send(msg tea.Msg) {
	_, cmd := d.m.Update(msg)
	d.run(cmd)
}

// until applies messages until cond holds for the view, failing after timeout.
func (d *teaDriver) until(t *testing.T, timeout time.Duration, what string, cond func(view string) bool) {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		v := d.m.View()
		if cond(v) {
			return
		}
		select {
		case msg := <-d.msgs:
			d.send(msg)
		case <-timer.C:
			t.Fatalf("model never showed %s within %v:\n%s", what, timeout, v)
		}
	}
}

func runes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

// `infrarust top`'s model fed by the real client and SSE stream shows an ejection
// live, and a drain from the keyboard reaches the proxy.
func TestE2ETopModelShowsEjection(t *testing.T) {
	a := startFake(t, fakemc.Options{Name: "a"})
	b := startFake(t, fakemc.Options{Name: "b"})
	c := startFake(t, fakemc.Options{Name: "c"})
	dead := a.Addr()
	s := startServe(t, t.TempDir(), e2eServer("lobby", dead, b.Addr(), c.Addr()))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := tui.New(tui.Options{
		Client: s.client, Events: tui.AdminEvents{C: s.client},
		// Far beyond the test: only the live stream can bring the ejection in.
		Interval: time.Hour,
		Renderer: tui.NewRenderer(io.Discard, true), Target: s.adminURL, Context: ctx,
	})
	d := newTeaDriver(t, m)
	d.send(tea.WindowSizeMsg{Width: 120, Height: 40})
	d.run(m.Init())
	d.until(t, 5*time.Second, "a live connection with three addresses nobody has tried (○)", func(v string) bool {
		return strings.Contains(v, "● live") && containsLine(v, dead, "○ unknown") && containsLine(v, c.Addr(), "○ unknown")
	})

	killBackend(t, a)
	for i := range 3 {
		name := "Top" + strconv.Itoa(i)
		if got := loginTo(t, s.proxyAddr, name); got != reached("b", name) {
			t.Fatalf("login %d: %q", i, got)
		}
	}
	d.until(t, 5*time.Second, dead+" as unhealthy (✖)", func(v string) bool {
		return containsLine(v, dead, "✖") && strings.Contains(v, "backend.health_change")
	})

	// Drain b from the keyboard: backends pane, second row, d, y.
	d.send(tea.KeyMsg{Type: tea.KeyTab})
	d.send(runes("j"))
	d.send(runes("d"))
	if v := m.View(); !strings.Contains(v, "drain "+b.Addr()+" on lobby? [y/n]") {
		t.Fatalf("no confirmation for b:\n%s", v)
	}
	d.send(runes("y"))
	d.until(t, 5*time.Second, b.Addr()+" as draining (⇣)", func(v string) bool {
		return containsLine(v, b.Addr(), "⇣")
	})
	if st := backendState(t, s.client, "lobby", b.Addr()); st.State != "draining" {
		t.Fatalf("the keyboard drain did not reach the proxy: %+v", st)
	}
	if got := loginTo(t, s.proxyAddr, "AfterDrain"); got != reached("c", "AfterDrain") {
		t.Fatalf("login after a drained and b drained: %q, want c", got)
	}
}

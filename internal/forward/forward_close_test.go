package forward

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestCloseEndsEverySession(t *testing.T) {
	for _, im := range impls() {
		t.Run(im.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			f := im.new(t)
			players, servers := newPairer(t), newPairer(t)
			var rigs []*rig
			for range 50 {
				rigs = append(rigs, newRig(t, f, players, servers, nil))
			}
			// One is busy: the server streams to a player that does not read.
			busy := rigs[0]
			go func() { newStream(6).send(busy.server, 1<<40) }()
			if _, err := io.ReadFull(busy.player, make([]byte, 1<<16)); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			for i, r := range rigs {
				// Close has returned: every done has run already.
				if n := r.calls.Load(); n != 1 {
					t.Fatalf("session %d: done called %d times by the time Close returned", i, n)
				}
				if res := <-r.res; !errors.Is(res.Err, ErrClosed) {
					t.Errorf("session %d: %v, want ErrClosed", i, res.Err)
				}
			}
			// The peers see their connections end.
			for _, r := range rigs[1:] {
				r.player.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, err := io.ReadAll(r.player); err != nil && !isResetOrPipe(err) {
					t.Fatalf("player after Close: %v", err)
				}
			}
			// A session handed over after Close is refused the same way, at once.
			late := newRig(t, f, players, servers, nil)
			if n := late.calls.Load(); n != 1 {
				t.Fatalf("Forward after Close: done called %d times before returning", n)
			}
			if res := <-late.res; !errors.Is(res.Err, ErrClosed) {
				t.Errorf("Forward after Close: %v, want ErrClosed", res.Err)
			}
			late.player.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadAll(late.player); err != nil {
				t.Errorf("player of a refused session: %v, want EOF", err)
			}
			if err := f.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			for _, r := range rigs {
				r.player.Close()
				r.server.Close()
			}
		})
	}
}

func TestClosedConnIsReportedOnce(t *testing.T) {
	cases := []struct {
		name   string
		closed func(r *rig) *net.TCPConn
		peer   func(r *rig) *net.TCPConn // the peer of the conn that stays open
	}{
		{"client already closed", func(r *rig) *net.TCPConn { return r.client }, func(r *rig) *net.TCPConn { return r.server }},
		{"backend already closed", func(r *rig) *net.TCPConn { return r.backend }, func(r *rig) *net.TCPConn { return r.player }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachImpl(t, func(t *testing.T, f Forwarder) {
				r := newRig(t, f, newPairer(t), newPairer(t), func(r *rig) { tc.closed(r).Close() })
				if res := r.wait(t); res.Err == nil {
					t.Errorf("result %+v, want an error", res)
				}
				p := tc.peer(r)
				p.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, err := io.ReadAll(p); err != nil && !isResetOrPipe(err) {
					t.Errorf("peer of the open conn: %v, want its connection closed", err)
				}
			})
		})
	}
}

func TestParseKind(t *testing.T) {
	cases := []struct {
		in   string
		want Kind
		ok   bool
	}{
		{"", Auto, true},
		{"auto", Auto, true},
		{"goroutine", Goroutine, true},
		{"epoll", Epoll, true},
		{"EPOLL", "", false},
		{"splice", "", false},
	}
	for _, tc := range cases {
		got, err := ParseKind(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestNewPicksTheKind(t *testing.T) {
	linux := runtime.GOOS == "linux"
	native := "*forward.goroutineForwarder"
	if linux {
		native = "*forward.epollForwarder"
	}
	cases := []struct {
		kind    Kind
		want    string // the implementation's type; "" when New must fail
		wantErr error  // what the failure wraps, if anything in particular
	}{
		{Goroutine, "*forward.goroutineForwarder", nil},
		{Auto, native, nil},
		{"", native, nil},
		{"threads", "", nil},
	}
	if linux {
		cases = append(cases, struct {
			kind    Kind
			want    string
			wantErr error
		}{Epoll, "*forward.epollForwarder", nil})
	} else {
		cases = append(cases, struct {
			kind    Kind
			want    string
			wantErr error
		}{Epoll, "", ErrUnavailable})
	}
	for _, tc := range cases {
		f, err := New(tc.kind)
		if tc.want == "" {
			if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Errorf("New(%q) error %v, want an error wrapping %v", tc.kind, err, tc.wantErr)
			}
			if f != nil {
				f.Close()
			}
			continue
		}
		if err != nil {
			t.Fatalf("New(%q): %v", tc.kind, err)
		}
		if got := fmt.Sprintf("%T", f); got != tc.want {
			t.Errorf("New(%q) is %s, want %s", tc.kind, got, tc.want)
		}
		f.Close()
	}
}

// sockBufs is what the kernel lets c hold both ways (it reports doubled values).
func sockBufs(t testing.TB, c *net.TCPConn) int64 {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	if err := rc.Control(func(fd uintptr) { total = int64(sockBufSizes(t, fd)) }); err != nil {
		t.Fatal(err)
	}
	return total
}

// A session's end func ends it alone, whether it is idle or busy: done gets
// ErrEnded once, both peers see their connections end, the other sessions go
// on, and calling it again (or after the session is over) does nothing.
func TestEndEndsOneSession(t *testing.T) {
	eachImpl(t, func(t *testing.T, f Forwarder) {
		players, servers := newPairer(t), newPairer(t)
		idle := newRig(t, f, players, servers, nil)
		busy := newRig(t, f, players, servers, nil)
		other := newRig(t, f, players, servers, nil)
		go func() { newStream(7).send(busy.server, 1<<40) }()
		if _, err := io.ReadFull(busy.player, make([]byte, 1<<16)); err != nil {
			t.Fatal(err)
		}
		for _, r := range []*rig{idle, busy} {
			r.end()
			r.end()
			if res := r.wait(t); !errors.Is(res.Err, ErrEnded) {
				t.Fatalf("ended session: %v, want ErrEnded", res.Err)
			}
			r.player.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadAll(r.player); err != nil && !isResetOrPipe(err) {
				t.Fatalf("player of an ended session: %v", err)
			}
			r.end()
			if n := r.calls.Load(); n != 1 {
				t.Fatalf("done called %d times", n)
			}
		}
		if err := exchange(other, 1, 4096); err != nil {
			t.Fatalf("a session beside the ended ones: %v", err)
		}
		other.player.Close()
		other.server.Close()
		other.wait(t)
		other.end() // over already: nothing happens
	})
}

//go:build linux

package forward

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// newEpoll is a one-shard epoll forwarder for tests that look inside it.
func newEpoll(t *testing.T, opts EpollOptions) *epollForwarder {
	t.Helper()
	f, err := NewEpoll(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f.(*epollForwarder)
}

// TestEventsBeforeLiveAreServed holds a session between registration and going
// live until the shard has seen its first bytes: those must be noted, not dropped,
// and served once Forward hands the session over.
func TestEventsBeforeLiveAreServed(t *testing.T) {
	f := newEpoll(t, EpollOptions{Shards: 1})
	noted := false
	testHookBeforeLive = func(sh *shard, s *session) {
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			sh.mu.Lock()
			noted = s.noted
			sh.mu.Unlock()
			if noted {
				return
			}
		}
	}
	defer func() { testHookBeforeLive = nil }()
	r := newRig(t, f, newPairer(t), newPairer(t), func(r *rig) {
		r.player.Write([]byte("early"))
		waitReadable(t, r.client)
	})
	if !noted {
		t.Fatal("the shard never noted the bytes that were waiting at registration")
	}
	if got, err := io.ReadFull(r.server, make([]byte, 5)); err != nil {
		t.Fatalf("server read %d, %v: the noted bytes were never served", got, err)
	}
	r.player.CloseWrite()
	r.server.CloseWrite()
	if res := r.wait(t); res.Err != nil || res.Up != 5 {
		t.Errorf("result %+v", res)
	}
}

// TestFailedRegistrationIsUndoneByForward makes the second epoll_ctl fail (the
// client socket is already in the set): Forward must report it once and close both
// sockets, and the shard must never serve the session.
func TestFailedRegistrationIsUndoneByForward(t *testing.T) {
	f := newEpoll(t, EpollOptions{Shards: 1})
	testHookRegister = func(sh *shard, s *session) {
		ev := unix.EpollEvent{Events: unix.EPOLLIN}
		if err := unix.EpollCtl(sh.set.FD, unix.EPOLL_CTL_ADD, s.cfd, &ev); err != nil {
			t.Error(err)
		}
	}
	defer func() { testHookRegister = nil }()
	r := newRig(t, f, newPairer(t), newPairer(t), nil)
	res := r.wait(t)
	if !errors.Is(res.Err, unix.EEXIST) {
		t.Fatalf("result %v, want the epoll_ctl EEXIST", res.Err)
	}
	for _, c := range []*net.TCPConn{r.player, r.server} {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadAll(c); err != nil {
			t.Errorf("peer after a failed registration: %v, want EOF", err)
		}
	}
	sh := f.shards[0]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if n := sh.slots.Len(); n != 0 {
		t.Errorf("%d slots still hold a session after its registration failed", n)
	}
}

// fdKinds counts this process's open fds by what they are: "socket", "pipe", ...
func fdKinds(t *testing.T) map[string]int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range ents {
		l, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // the directory's own fd, gone already
		}
		kind, _, _ := strings.Cut(l, ":")
		kinds[kind]++
	}
	return kinds
}

// TestIdleSessionsHoldOnlyTheirSockets moves a bulk transfer through every session
// (so pipes were used), then checks the idle sessions hold no pipe and no goroutine:
// the pipes in use are the pool's few, whatever the number of sessions. The goroutine
// forwarder is the control: it holds two pipes (four fds) and two goroutines each.
func TestIdleSessionsHoldOnlyTheirSockets(t *testing.T) {
	const sessions = 40
	for _, im := range impls()[:2] {
		t.Run(im.name, func(t *testing.T) {
			f := im.new(t)
			defer f.Close()
			players, servers := newPairer(t), newPairer(t)
			settlePipes(t)
			base, g0 := fdKinds(t), runtime.NumGoroutine()
			var rigs []*rig
			for range sessions {
				r := newRig(t, f, players, servers, nil)
				rigs = append(rigs, r)
				sent := make(chan error, 1)
				go func() { _, _, err := newStream(7).send(r.player, 4<<20); sent <- err }()
				if n, _, err := drainN(r.server, 4<<20); err != nil || n != 4<<20 {
					t.Fatalf("bulk through a session: %d bytes, %v", n, err)
				}
				if err := <-sent; err != nil {
					t.Fatal(err)
				}
			}
			now := fdKinds(t)
			pipes := now["pipe"] - base["pipe"]
			floor := g0 // what should be left: nothing for epoll, two per session for the control
			if im.name == "goroutine" {
				floor += 2 * sessions
			}
			goroutines := settledGoroutines(floor) - g0
			// The test holds the player and server ends: 2 sockets per session.
			sockets := now["socket"] - base["socket"] - 2*sessions
			t.Logf("%d idle sessions: %d sockets, %d pipe fds, %d goroutines", sessions, sockets, pipes, goroutines)
			if sockets != 2*sessions {
				t.Errorf("the forwarder holds %d sockets for %d sessions, want %d", sockets, sessions, 2*sessions)
			}
			if im.name == "goroutine" {
				if pipes < 4*sessions || goroutines < 2*sessions {
					t.Errorf("control: %d pipe fds and %d goroutines for %d sessions; the counts do not see what they should", pipes, goroutines, sessions)
				}
				return
			}
			ef := f.(*epollForwarder)
			if limit := 2 * ef.pool.keep; pipes > limit {
				t.Errorf("%d idle sessions hold %d pipe fds, want at most the pool's %d", sessions, pipes, limit)
			}
			if goroutines != 0 {
				t.Errorf("%d idle sessions added %d goroutines, want none", sessions, goroutines)
			}
			for _, r := range rigs {
				r.player.Close()
				r.server.Close()
			}
		})
	}
}

// settledGoroutines is runtime.NumGoroutine once the test's own finished helpers
// have exited (a helper that has sent its result may not have returned yet), or
// after 5 s.
func settledGoroutines(floor int) int {
	n := runtime.NumGoroutine()
	for end := time.Now().Add(5 * time.Second); n > floor && time.Now().Before(end); n = runtime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	return n
}

// drainN reads exactly n bytes.
func drainN(r io.Reader, n int64) (int64, []byte, error) {
	return drain(io.LimitReader(r, n))
}

// settlePipes lets GC close the splice pipes Go's own pool still caches from
// earlier tests, so that a later increase comes from the forwarder under test.
func settlePipes(t *testing.T) {
	t.Helper()
	last := -1
	for range 50 {
		runtime.GC()
		n := fdKinds(t)["pipe"]
		if n == last {
			return
		}
		last = n
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLastDirectionClosesWithoutShutdown: the first direction to reach EOF gets a
// half-close; the last one's FIN comes with the close that follows, with no
// shutdown call of its own, and the peer still reads every byte and a clean EOF.
func TestLastDirectionClosesWithoutShutdown(t *testing.T) {
	for _, first := range []string{"player", "server"} {
		t.Run(first+" ends first", func(t *testing.T) {
			f := newEpoll(t, EpollOptions{Shards: 1})
			var shutdowns atomic.Int32
			testHookShutdown = func() { shutdowns.Add(1) }
			defer func() { testHookShutdown = nil }()
			r := newRig(t, f, newPairer(t), newPairer(t), nil)
			a, b := r.player, r.server
			if first == "server" {
				a, b = b, a
			}
			if err := a.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(b); err != nil || len(got) != 0 {
				t.Fatalf("%s read %q, %v; want the half-close", first, got, err)
			}
			if _, err := b.Write([]byte("bye")); err != nil {
				t.Fatal(err)
			}
			if err := b.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(a); err != nil || string(got) != "bye" {
				t.Fatalf("the side that ended first read %q, %v; want the last bytes, then EOF (not a reset)", got, err)
			}
			if res := r.wait(t); res.Err != nil {
				t.Fatalf("result %+v", res)
			}
			if n := shutdowns.Load(); n != 1 {
				t.Errorf("%d shutdown calls; want 1 (the first half-close only)", n)
			}
		})
	}
}

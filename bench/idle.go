package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
)

// Idle is what idle sessions cost the proxy in one mode: logged-in players who
// send nothing, the common case of a Minecraft network.
type Idle struct {
	Mode     string `json:"mode"`
	Target   string `json:"target,omitempty"` // as Row.Target
	Peer     bool   `json:"peer,omitempty"`   // as Row.Peer
	Sessions int    `json:"sessions"`
	// RSSPerSess is the proxy's resident memory per session: the child's VmRSS
	// delta (--binary), or in-process the process's delta minus what the same
	// sessions cost straight to the backend (client and backend side).
	RSSPerSess float64 `json:"proxy_rss_bytes_per_session"`
	// GoPerSess and StackPerSess are Go heap+stacks and stacks alone (in-process only).
	GoPerSess    float64 `json:"proxy_go_heap_stack_bytes_per_session,omitempty"`
	StackPerSess float64 `json:"proxy_stack_bytes_per_session,omitempty"`
	// GoroutinesPerSess and FDsPerSess are the proxy's own (FDs: -1 in-process, mixed with ours).
	GoroutinesPerSess float64 `json:"proxy_goroutines_per_session"`
	FDsPerSess        float64 `json:"proxy_fds_per_session"`
	// OpenRate is how fast the sessions were logged in (64 dialers), logins/s.
	OpenRate float64 `json:"open_logins_per_second"`
	// IdleCPU is the proxy's CPU per player-second while the sessions send
	// nothing; KeepAliveCPU its CPU per keep-alive exchange (a frame each way)
	// while every player makes one a second (--binary only).
	IdleCPU      time.Duration `json:"proxy_idle_cpu_per_player_second_ns,omitempty"`
	KeepAliveCPU time.Duration `json:"proxy_cpu_per_keep_alive_ns,omitempty"`
	// Stranded is how many logins the proxy took to the server and then never
	// read from again (replaced by another player's; see openIdleMC).
	Stranded int `json:"stranded_logins,omitempty"`
	// GoroutinesLeft is the proxy's goroutines after every session closed, minus before.
	GoroutinesLeft int    `json:"proxy_goroutines_left_after_close"`
	Note           string `json:"note,omitempty"`
}

// idleFor is how many idle sessions of mode fit under RLIMIT_NOFILE through u:
// a passthrough session costs u what fdsPerSession says, an intercepted one its
// two sockets.
func (e *mcEnv) idleFor(mode string, u *underTest) (int, string) {
	if mode == modePassthrough {
		return sessionsFor(e.o, u)
	}
	return sessionsFor(e.o, &underTest{forwarder: "epoll", t: u.t}) // 2 fds, as an epoll session
}

// perSession is a snapshot divided by the sessions it holds.
type perSession struct{ rss, goMem, stack, goroutines, fds float64 }

// idle opens the same number of idle sessions through each mode (a fresh
// proxy process for each with --binary, so no mode inherits another's heap)
// and records what they cost the proxy.
func (e *mcEnv) idle(r *runner) error {
	var direct perSession
	inProcess := r.px().Pid() == 0
	if inProcess {
		// Baseline: the same sessions straight to the backend (client and backend cost).
		n, _ := e.idleFor(modePassthrough, r.pts[0])
		base := snap()
		conns, _, err := e.openIdleMC(e.be.Addr(), "direct", 0, n)
		if err != nil {
			return fmt.Errorf("direct sessions: %w", err)
		}
		open := snap()
		closeClients(conns)
		settle(base.goroutines, 10*time.Second)
		per := func(v int64) float64 { return float64(v) / float64(n) }
		direct = perSession{rss: per(open.rss - base.rss), goMem: per(open.goMem - base.goMem), stack: per(open.stack - base.stack),
			goroutines: per(int64(open.goroutines - base.goroutines)), fds: per(int64(open.fds - base.fds))}
	}
	for _, m := range e.modes() {
		if m == modeReframe {
			continue // idle, it is offline: the threshold matters only for traffic
		}
		for _, u := range r.modeTargets(m) {
			own := u.t.Pid() != 0 // a process of its own (--binary, Gate)
			if own {
				if err := r.reopen(u); err != nil {
					return err
				}
			}
			n, note := e.idleFor(m, u)
			id, err := e.idleMode(r, u, m, n, !own, direct)
			if err != nil {
				return fmt.Errorf("%s %s: %w", m, u.name, err)
			}
			id.Note = note
			if id.Stranded > 0 {
				id.Note = strings.TrimPrefix(fmt.Sprintf("%s; %d of the %d logins were taken to the server and then never read from again: closed and replaced by another player's", note, id.Stranded, n), "; ")
			}
			r.res.Idle = append(r.res.Idle, id)
			e.o.logf("idle %-12s %-10s %d sessions: proxy %.1f KiB RSS, %.2f goroutines, %.2f fds per session; opened at %.0f/s; %+d goroutines left",
				m, u.name, n, id.RSSPerSess/1024, id.GoroutinesPerSess, id.FDsPerSess, id.OpenRate, id.GoroutinesLeft)
		}
	}
	return nil
}

func (e *mcEnv) idleMode(r *runner, u *underTest, mode string, n int, inProcess bool, direct perSession) (Idle, error) {
	id := Idle{Mode: mode, Sessions: n}
	if u.named(mode) {
		id.Target, id.Peer = u.name, u.peer()
	}
	px := u.t
	addr := px.ModeAddr(mode)
	// Warm up first, so what every mode keeps regardless of the session count
	// (the keep-alive connections to the session server, the dialers' accounts)
	// is in the baseline, not in the per-session figure.
	// Players of their own: a proxy may still be ending a warm-up session when
	// the same player logs in again (Gate then fails the new one's server).
	warm, _, err := e.openIdleMC(addr, hostOf(mode), n, min(n, 64))
	if err != nil {
		return id, fmt.Errorf("warm-up: %w", err)
	}
	closeClients(warm)
	time.Sleep(200 * time.Millisecond)
	if inProcess {
		e.dropIdleHTTP()
	}
	base := snap()
	rss0, _ := px.RSS()
	fd0, _ := px.FDs()
	g0 := px.Goroutines()
	heap0, stack0, mem0 := goMemory(px)
	start := time.Now()
	conns, stranded, err := e.openIdleMC(addr, hostOf(mode), 0, n)
	if err != nil {
		return id, err
	}
	id.Stranded = stranded
	id.OpenRate = float64(n) / time.Since(start).Seconds()
	// Let the proxy's sessions settle into their idle state (the last logins'
	// goroutines finish handing over) before measuring.
	time.Sleep(500 * time.Millisecond)
	per := func(v int64) float64 { return float64(v) / float64(n) }
	if inProcess {
		e.dropIdleHTTP()
		open := snap()
		if r.o.WhileOpen != nil && mode == modeClientOnly {
			r.o.WhileOpen()
		}
		id.RSSPerSess = per(open.rss-base.rss) - direct.rss
		id.GoPerSess = per(open.goMem-base.goMem) - direct.goMem
		id.StackPerSess = per(open.stack-base.stack) - direct.stack
		id.GoroutinesPerSess = per(int64(open.goroutines-base.goroutines)) - direct.goroutines
		id.FDsPerSess = per(int64(open.fds-base.fds)) - direct.fds
	} else {
		rss1, _ := px.RSS()
		fd1, _ := px.FDs()
		id.RSSPerSess = per(rss1 - rss0)
		if heap1, stack1, ok := goMemory(px); ok && mem0 {
			id.GoPerSess = per(heap1 + stack1 - heap0 - stack0)
			id.StackPerSess = per(stack1 - stack0)
		}
		if err := e.keepAliveCPU(px, conns, &id); err != nil {
			closeClients(conns)
			return id, err
		}
		id.FDsPerSess = per(int64(fd1 - fd0))
		if g := px.Goroutines(); g >= 0 && g0 >= 0 {
			id.GoroutinesPerSess = per(int64(g - g0))
		}
	}
	closeClients(conns)
	switch {
	case inProcess:
		e.dropIdleHTTP()
		id.GoroutinesLeft = settle(base.goroutines, 10*time.Second) - base.goroutines
	case g0 >= 0:
		id.GoroutinesLeft = settleProxy(px, g0, 10*time.Second) - g0
	}
	return id, nil
}

// keepAliveCPU measures the proxy's CPU with the idle sessions open: eight
// seconds of nothing (per player-second: longer than the stall watch's look,
// every 7.5 s at the default stall_timeout, and 0.16 µs per player-second a
// 10 ms tick of the CPU clock at 8 000 players), then five of one keep-alive
// exchange per player a second (per exchange, the idle share taken off).
func (e *mcEnv) keepAliveCPU(px target, clients []*mcClient, id *Idle) error {
	const quiet, busy = 8 * time.Second, 5 * time.Second
	c0, ok := px.CPU()
	if !ok {
		return nil
	}
	time.Sleep(quiet)
	c1, _ := px.CPU()
	start := time.Now()
	n, err := keepAlives(clients, busy)
	elapsed := time.Since(start)
	if err != nil {
		return fmt.Errorf("keep-alives: %w", err)
	}
	c2, _ := px.CPU()
	players := time.Duration(len(clients))
	id.IdleCPU = (c1 - c0) / (players * time.Duration(quiet/time.Second))
	if n > 0 {
		idleShare := time.Duration(float64(id.IdleCPU*players) * elapsed.Seconds())
		id.KeepAliveCPU = max(c2-c1-idleShare, 0) / time.Duration(n)
	}
	return nil
}

// goMemory is a built proxy's Go heap and stacks (from its /metrics).
func goMemory(px target) (heap, stacks int64, ok bool) {
	if b, isBinary := px.(*binaryProxy); isBinary {
		return b.GoMemory()
	}
	return 0, 0, false
}

// dropIdleHTTP closes the keep-alive connections to the stand-in session
// server (the clients' joins, the in-process proxy's hasJoined), so
// in-process snapshots count sessions only.
func (e *mcEnv) dropIdleHTTP() {
	e.hc.CloseIdleConnections()
	auth.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond) // the stand-in's side of them ends
}

// settleProxy waits (bounded) until the proxy's goroutine count is back to at most want.
func settleProxy(px target, want int, limit time.Duration) int {
	end := time.Now().Add(limit)
	for {
		n := px.Goroutines()
		if n <= want || time.Now().After(end) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

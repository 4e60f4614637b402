package bench

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// What idle sessions cost: memory and descriptors per held connection.

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

type snapshot struct {
	rss, goMem, stack int64
	goroutines, fds   int
}

func snap() snapshot {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, _ := rssOf("self")
	return snapshot{rss: rss, goMem: int64(ms.HeapInuse + ms.StackInuse), stack: int64(ms.StackInuse), goroutines: runtime.NumGoroutine(), fds: countFDs()}
}

// openIdle opens n idle sessions to addr with 64 dialers.
func openIdle(addr string, n int) ([]net.Conn, error) {
	conns := make([]net.Conn, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr errOnce
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || firstErr.get() != nil {
					return
				}
				c, err := openSession(addr, cmdIdle)
				if err != nil {
					firstErr.set(err)
					return
				}
				conns[i] = c
			}
		}()
	}
	wg.Wait()
	if err := firstErr.get(); err != nil {
		closeAll(conns)
		return nil, err
	}
	return conns, nil
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// settle waits (bounded) until the goroutine count is back to at most want.
func settle(want int, limit time.Duration) int {
	end := time.Now().Add(limit)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(end) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func memory(o Options, direct string, u *underTest) (*Memory, error) {
	px := u.t
	m := &Memory{Target: u.name}
	n, note := sessionsFor(o, u)
	m.Sessions, m.Note = n, note

	// Baseline: the same idle sessions straight to the backend (client + backend cost).
	base := snap()
	baseDirect := base
	conns, err := openIdle(direct, n)
	if err != nil {
		return m, fmt.Errorf("direct sessions: %w", err)
	}
	withDirect := snap()
	closeAll(conns)
	settle(base.goroutines, 10*time.Second)

	base = snap()
	var pxBase int64
	pxBase, hasRSS := px.RSS()
	fdBase, _ := px.FDs()
	conns, err = openIdle(px.Addr(), n)
	if err != nil {
		return m, fmt.Errorf("proxied sessions: %w", err)
	}
	open := snap()
	pxOpen, _ := px.RSS()
	if o.WhileOpen != nil {
		o.WhileOpen()
	}
	m.GoroutinesBefore, m.GoroutinesOpen = base.goroutines, open.goroutines
	directRSS := float64(withDirect.rss-base.rss) / float64(n)
	directGo := float64(withDirect.goMem-base.goMem) / float64(n)
	directG := withDirect.goroutines - base.goroutines
	m.DirectRSSPerSess = directRSS
	if hasRSS {
		m.ProxyRSSPerSess = float64(pxOpen-pxBase) / float64(n)
		fdOpen, _ := px.FDs()
		m.ProxyFDsPerSess = float64(fdOpen-fdBase) / float64(n)
	} else {
		// In-process: the proxy's share is what proxied sessions cost beyond direct ones.
		m.ProxyRSSPerSess = float64(open.rss-base.rss)/float64(n) - directRSS
		m.ProxyGoPerSess = float64(open.goMem-base.goMem)/float64(n) - directGo
		m.ProxyStackPerSess = float64(open.stack-base.stack)/float64(n) - float64(withDirect.stack-baseDirect.stack)/float64(n)
		m.ProxyFDsPerSess = float64(open.fds-base.fds-(withDirect.fds-baseDirect.fds)) / float64(n)
		m.ProxyGoroutines = (open.goroutines - base.goroutines - directG) * 100 / n
	}
	closeAll(conns)
	m.GoroutinesAfter = settle(base.goroutines, 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	after := snap()
	m.GoroutinesAfter = after.goroutines
	m.ActiveAfter = px.Active()
	m.HeapAfterDeltaKiB = float64(after.goMem-base.goMem) / 1024
	m.RSSAfterDeltaKiB = float64(after.rss-base.rss) / 1024
	if hasRSS {
		pxAfter, _ := px.RSS()
		m.RSSAfterDeltaKiB = float64(pxAfter-pxBase) / 1024
		// Go's splice pipe pool keeps idle pipes until two GCs; they are not sessions.
		all, pipes := px.FDs()
		m.ProxyFDsAfter = all - pipes - fdBase
		m.PooledPipeFDs = pipes
	}
	o.logf("memory %s: %d sessions, proxy %.0f B/session RSS, %.0f B/session Go heap+stack (%.0f stack), goroutines %d -> %d -> %d",
		u.name, n, m.ProxyRSSPerSess, m.ProxyGoPerSess, m.ProxyStackPerSess, m.GoroutinesBefore, m.GoroutinesOpen, m.GoroutinesAfter)
	return m, nil
}

func countFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// sessionsFor is how many idle passthrough sessions fit under RLIMIT_NOFILE for
// u: the proxy's own fds per session (fdsPerSession), and this process's client
// and backend socket of each (in-process, all of them live here), each process
// keeping 512 fds to spare. A note says when the limit scaled the count down.
func sessionsFor(o Options, u *underTest) (int, string) {
	limit, err := RaiseFileLimit()
	if err != nil {
		return o.Sessions, "could not raise RLIMIT_NOFILE: " + err.Error()
	}
	if limit <= 512 {
		return o.Sessions, ""
	}
	proxyFDs, ours := u.fdsPerSession(), 2
	if u.t != nil && u.t.Pid() == 0 {
		ours += proxyFDs // in-process: the proxy's fds are ours
	}
	fit := int(limit-512) / max(proxyFDs, ours)
	if fit >= o.Sessions {
		return o.Sessions, ""
	}
	return fit, fmt.Sprintf("RLIMIT_NOFILE %d (the hard limit; the proxy inherits it) allows %d sessions at %d proxy fds and %d of ours each; scaled down from %d",
		limit, fit, proxyFDs, ours, o.Sessions)
}

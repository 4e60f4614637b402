package proxy

import (
	"net/netip"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/metrics"
)

// failedLogWindow is how long one IP's failed logins for the same reason make
// one log line: an operator sees every kind of failure at INFO, a flood does
// not flood the log.
const failedLogWindow = 10 * time.Second

// failedLogMax bounds the remembered (IP, reason) pairs; past it the stale ones
// go, and if none is stale the memory starts over (a few repeated lines at most).
const failedLogMax = 1 << 14

type failKey struct {
	ip     netip.Addr
	reason string
}

// failedLogins decides which failed logins get their INFO line, and counts
// the ones it folds into the next.
type failedLogins struct {
	mu   sync.Mutex
	last map[failKey]*failEntry
}

type failEntry struct {
	at     time.Time // the last line's
	folded int       // failures since, not logged at INFO
}

// allow reports whether ip's failure for reason is logged now, and how many
// of its failures were folded since the last line.
func (f *failedLogins) allow(ip netip.Addr, reason string, now time.Time) (bool, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := failKey{ip, reason}
	if e, ok := f.last[k]; ok && now.Sub(e.at) < failedLogWindow {
		e.folded++
		return false, 0
	}
	if f.last == nil {
		f.last = map[failKey]*failEntry{}
	}
	folded := 0
	if e, ok := f.last[k]; ok {
		folded = e.folded
	}
	if len(f.last) >= failedLogMax {
		for k, e := range f.last {
			if now.Sub(e.at) >= failedLogWindow {
				delete(f.last, k)
			}
		}
		if len(f.last) >= failedLogMax {
			clear(f.last)
		}
	}
	f.last[k] = &failEntry{at: now}
	return true, folded
}

// loginFailed is the one INFO line of a login that did not get its player in
// (unknown host, banned, refused, rate-limited, auth failed, no backend), at
// most one per IP and reason per failedLogWindow, saying how many of the same
// it folded since the last (folded); the rest are debug lines.
func (p *door) loginFailed(cn *conn, reason, detail string) {
	server := ""
	if cn.srv != nil {
		server = cn.srv.id
	}
	args := []any{"client", cn.client, "player", cn.player, "host", cn.host, "server", server, "reason", reason, "detail", detail}
	if ok, folded := p.failLog.allow(cn.ip, reason, p.now()); ok {
		if folded > 0 {
			args = append(args, "folded", folded)
		}
		p.log.Info("login failed", args...)
		return
	}
	p.log.Debug("login failed", args...)
}

// refusalOutcome is how a login a server's rules refused is counted.
func refusalOutcome(r *refusal) metrics.LoginOutcome {
	switch r.rule {
	case ruleBan:
		return metrics.LoginBanned
	case ruleIPFilter:
		return metrics.LoginFailed
	}
	return metrics.LoginBackendRefused
}

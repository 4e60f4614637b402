package bench

import (
	"fmt"
	"io"
	"strings"
)

// target returns the target for a row and whether the row meets it.
func rowTarget(r Row) (string, string) {
	switch {
	case r.CPULimit > 0:
		return fmt.Sprintf("≤ 1.3× limit %s %s (%.2f×)", num(r.CPULimit), r.CPUUnit, r.ProxyCPU/r.CPULimit), metStr(r.ProxyCPU <= 1.3*r.CPULimit)
	case strings.HasPrefix(r.Name, "bulk-"):
		return "≥ 0.95×", metStr(r.Ratio >= 0.95)
	case r.Name == "rtt-p99":
		return "< 100 µs added", metStr(r.Ratio < 100)
	case strings.HasPrefix(r.Name, "status-cache-on"):
		return "≥ 20000/s", metStr(r.Proxy >= 20000)
	}
	return "", ""
}

func metStr(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// WriteTable prints the result as Markdown tables (pasted as is into docs/benchmarks.md).
func WriteTable(w io.Writer, res *Result) {
	fmt.Fprintf(w, "Proxy: %s; %d CPUs; load average %s at the start, %s at the end; %.0f s.\n\n",
		res.Mode, res.CPUs, orDash(res.LoadStart), orDash(res.LoadEnd), res.Seconds)
	fmt.Fprintf(w, "| workload | direct | via proxy | proxy/direct (or added) | proxy CPU per unit | target | |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---|---|\n")
	for _, r := range res.Rows {
		rel := fmt.Sprintf("%.3f×", r.Ratio)
		if r.Added {
			rel = fmt.Sprintf("%+.1f µs", r.Ratio)
		}
		cpu := ""
		if r.CPUUnit != "" {
			cpu = num(r.ProxyCPU) + " " + r.CPUUnit
		}
		t, met := rowTarget(r)
		if r.Errors > 0 {
			met += fmt.Sprintf(" (%d errors)", r.Errors)
		}
		fmt.Fprintf(w, "| %s | %s %s | %s %s | %s | %s | %s | %s |\n", r.Name, num(r.Direct), r.Unit, num(r.Proxy), r.Unit, rel, cpu, t, met)
	}
	for _, m := range res.Memory {
		kib := m.ProxyRSSPerSess / 1024
		label := ""
		if m.Target != "" {
			label = " [" + m.Target + "]"
		}
		fmt.Fprintf(w, "| idle sessions (%d)%s: proxy RSS per session | %.1f KiB (client+backend) | %.1f KiB | | | ≤ 16 KiB | %s |\n",
			m.Sessions, label, m.DirectRSSPerSess/1024, kib, metStr(kib <= 16))
		if m.ProxyGoPerSess != 0 {
			fmt.Fprintf(w, "| idle sessions%s: proxy Go heap+stacks per session | | %.1f KiB (%.1f KiB stacks) | | | | |\n", label, m.ProxyGoPerSess/1024, m.ProxyStackPerSess/1024)
			fmt.Fprintf(w, "| idle sessions%s: proxy goroutines / fds per session | | %.2f / %.2f | | | | |\n", label, float64(m.ProxyGoroutines)/100, m.ProxyFDsPerSess)
		}
		if m.ProxyGoPerSess == 0 && m.ProxyFDsPerSess != 0 {
			fmt.Fprintf(w, "| idle sessions%s: proxy fds per session; after close: socket fds, pooled pipe fds | | %.2f; %+d, %d | | | | |\n", label, m.ProxyFDsPerSess, m.ProxyFDsAfter, m.PooledPipeFDs)
		}
		leak := (m.GoroutinesAfter <= m.GoroutinesBefore+2 || m.GoroutinesBefore < 0) && m.ActiveAfter <= 0 && m.ProxyFDsAfter <= 0
		fmt.Fprintf(w, "| after close%s: goroutines before → open → after; proxy active | | %d → %d → %d; active %d | heap %+.0f KiB, RSS %+.0f KiB | | no leak | %s |\n",
			label, m.GoroutinesBefore, m.GoroutinesOpen, m.GoroutinesAfter, m.ActiveAfter, m.HeapAfterDeltaKiB, m.RSSAfterDeltaKiB, metStr(leak))
	}
	for _, m := range res.Memory {
		if m.Note != "" {
			fmt.Fprintf(w, "\nNote (%s): %s\n", orDash(m.Target), m.Note)
		}
	}
	if len(res.Idle) > 0 {
		fmt.Fprintf(w, "\n| idle sessions by mode [proxy] | sessions | proxy RSS per session | Go heap+stacks (stacks) | goroutines / fds per session | opened at | goroutines left after close | target | |\n")
		fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---|---|\n")
		var keepAlive []string
		for _, id := range res.Idle {
			gomem := ""
			if id.GoPerSess != 0 {
				gomem = fmt.Sprintf("%.1f KiB (%.1f KiB)", id.GoPerSess/1024, id.StackPerSess/1024)
			}
			t, met := "", ""
			if id.Mode != modePassthrough && !id.Peer { // the target is ours (issue 31)
				t, met = "≤ 16 KiB", metStr(id.RSSPerSess <= 16<<10)
			}
			goroutines := fmt.Sprintf("%.2f", id.GoroutinesPerSess)
			if id.Peer {
				goroutines = "–" // a peer exports no goroutine count
			}
			mode := id.Mode
			if id.Target != "" {
				mode += " [" + id.Target + "]"
			}
			fmt.Fprintf(w, "| %s | %d | %.1f KiB | %s | %s / %.2f | %.0f logins/s | %+d | %s | %s |\n",
				mode, id.Sessions, id.RSSPerSess/1024, gomem, goroutines, id.FDsPerSess, id.OpenRate, id.GoroutinesLeft, t, met)
			if id.KeepAliveCPU > 0 {
				vanilla := id.IdleCPU + id.KeepAliveCPU/15
				keepAlive = append(keepAlive, fmt.Sprintf("| %s | %d | %s | %s | %s |\n", mode, id.Sessions,
					id.IdleCPU, id.KeepAliveCPU, vanilla))
			}
		}
		if len(keepAlive) > 0 {
			fmt.Fprintf(w, "\n| held players [proxy] | players | proxy CPU per player-second, silent | per keep-alive exchange | per player-second, a keep-alive every 15 s (vanilla) |\n")
			fmt.Fprintf(w, "|---|---:|---:|---:|---:|\n")
			for _, l := range keepAlive {
				fmt.Fprint(w, l)
			}
		}
		notes := map[string]bool{}
		for _, id := range res.Idle {
			if id.Note != "" && !notes[id.Note] {
				notes[id.Note] = true
				fmt.Fprintf(w, "\nNote (%s %s): %s\n", id.Mode, orDash(id.Target), id.Note)
			}
		}
	}
	if len(res.Syscalls) > 0 {
		fmt.Fprintf(w, "\n| syscalls per login | logins | perf (idle subtracted) | strace -c | largest (strace, per login) |\n")
		fmt.Fprintf(w, "|---|---:|---:|---:|---|\n")
		for _, s := range res.Syscalls {
			var top []string
			for _, c := range s.Top {
				t := fmt.Sprintf("%s %.1f", c.Name, c.PerLogin)
				if c.Errors >= 0.05 {
					t += fmt.Sprintf(" (%.1f failed)", c.Errors)
				}
				top = append(top, t)
			}
			note := strings.Join(top, ", ")
			if s.Note != "" {
				note += " (" + strings.TrimSpace(s.Note) + ")"
			}
			fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %s |\n", s.Workload, s.Logins, s.PerLogin, s.StracePerLogin, note)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func num(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

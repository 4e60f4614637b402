package proxy

import (
	"context"
	"time"

	"github.com/infrarust-go/infrarust/internal/hooks"
)

// transportFilters runs the plugins' transport filters on a new connection, after
// its PROXY header (so they see the real client) and before anything of it is
// parsed. A filter that panics or runs past [events] transport_filter_timeout
// rejects. With no filter registered this step is one length check.
func (p *door) transportFilters(cn *conn) error {
	var filters []hooks.TransportFilter
	if d := p.opts.Hooks; d != nil {
		filters = d.TransportFilters()
	}
	if len(filters) == 0 {
		return nil
	}
	tc := &hooks.TransportConn{
		ID: p.transportIDs.Add(1), Remote: addrPort(cn.c.RemoteAddr()), Local: addrPort(cn.c.LocalAddr()),
		Client: cn.ip, Accepted: cn.accepted,
	}
	if !tc.Client.IsValid() {
		tc.Client = tc.Remote.Addr()
	}
	timeout := cn.st.cfg.Events.TransportFilterTimeout.D()
	for i, f := range filters {
		verdict, why := p.runTransportFilter(f, tc, timeout)
		if verdict != hooks.TransportContinue {
			cn.closeTransport(filters[:i], tc)
			return refuse("transport_filter", f.Name+": "+why, "")
		}
	}
	cn.transport = filters
	cn.transportConn = tc
	return nil
}

// runTransportFilter calls one filter under its deadline; a panic or an overrun
// is a rejection (a filter that cannot decide must not let a flood through).
func (p *door) runTransportFilter(f hooks.TransportFilter, tc *hooks.TransportConn, timeout time.Duration) (hooks.TransportVerdict, string) {
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	type answer struct {
		v     hooks.TransportVerdict
		panic any
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- answer{v: hooks.TransportReject, panic: r}
			}
		}()
		done <- answer{v: f.Filter(ctx, tc)}
	}()
	select {
	case a := <-done:
		if a.panic != nil {
			p.log.Warn("transport filter panicked; the connection is rejected", "filter", f.Name, "panic", a.panic)
			return hooks.TransportReject, "panicked"
		}
		return a.v, "rejected"
	case <-ctx.Done():
		p.log.Warn("transport filter ran past transport_filter_timeout; the connection is rejected", "filter", f.Name, "timeout", timeout)
		return hooks.TransportReject, "timed out"
	}
}

// closeTransport tells the filters that let the connection through that it closed.
func (cn *conn) closeTransport(filters []hooks.TransportFilter, tc *hooks.TransportConn) {
	for _, f := range filters {
		if f.Closed == nil {
			continue
		}
		func() {
			defer func() { _ = recover() }()
			f.Closed(tc)
		}()
	}
}

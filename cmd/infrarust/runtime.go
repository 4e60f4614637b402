package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/proxy"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// proxyRuntime adapts the running proxy to the Runtime the API serves.
type proxyRuntime struct {
	Proxy *proxy.Proxy
	// Manager is the server manager; nil when none is configured.
	Manager *manager.Manager
	Version string
	Bind    string

	rates rateWindow
}

// Servers implements Runtime.
func (r *proxyRuntime) Servers(now time.Time) []admin.ServerInfo {
	views := r.Proxy.Servers()
	out := make([]admin.ServerInfo, 0, len(views))
	reasons := map[string]string{}
	if r.Manager != nil {
		for _, st := range r.Manager.Snapshot() {
			reasons[st.ID] = st.Reason
		}
	}
	for _, v := range views {
		info := admin.ServerInfo{
			ID: v.ID, Domains: v.Config.Domains, Strategy: string(v.Pool.Strategy()),
			AddressCount: len(v.Config.Addresses), Players: v.Players, ProxyMode: v.Config.ProxyMode,
		}
		for _, b := range v.Pool.Snapshot(now) {
			if b.Health == balance.State("healthy") && !b.Drained {
				info.HealthyCount++
			}
		}
		if sm := v.Config.ServerManager; sm != nil && r.Manager != nil {
			info.State, info.ManagerType, info.StateReason = string(r.Manager.State(v.ID)), sm.Type, reasons[v.ID]
		}
		out = append(out, info)
	}
	return out
}

// Backends implements admin.Runtime.
func (r *proxyRuntime) Backends(server string, now time.Time) (admin.Backends, error) {
	v, ok := r.Proxy.Server(server)
	if !ok {
		return admin.Backends{}, admin.ErrUnknownServer
	}
	snap := v.Pool.Snapshot(now)
	out := admin.Backends{Server: server, Strategy: string(v.Pool.Strategy()), Backends: make([]admin.Backend, 0, len(snap))}
	for _, b := range snap {
		out.Backends = append(out.Backends, backendJSON(b, now))
	}
	return out, nil
}

func backendJSON(b balance.BackendStatus, now time.Time) admin.Backend {
	out := admin.Backend{
		Address: b.Address, Weight: b.Weight, EffectiveWeight: b.EffectiveWeight, Priority: b.Priority,
		State: string(b.State), Health: string(b.Health), ActiveConnections: b.Active, Inflight: b.Inflight,
		Ejections: b.Ejections, Full: b.Full,
	}
	if !b.HealthySince.IsZero() {
		s := now.Sub(b.HealthySince).Seconds()
		out.HealthySinceSecs = &s
	}
	if !b.LastFailure.IsZero() {
		s := now.Sub(b.LastFailure).Seconds()
		out.LastFailureSecsAgo = &s
	}
	if b.ConnectEWMA > 0 {
		ms := float64(b.ConnectEWMA.Microseconds()) / 1000
		out.ConnectEWMAms = &ms
	}
	return out
}

// SetDrain implements Runtime.
func (r *proxyRuntime) SetDrain(server, address string, drained bool, now time.Time) error {
	v, ok := r.Proxy.Server(server)
	if !ok {
		return admin.ErrUnknownServer
	}
	return mapPoolErr(v.Pool.SetDrain(address, drained, now))
}

// Reset implements Runtime.
func (r *proxyRuntime) Reset(server, address string, now time.Time) error {
	v, ok := r.Proxy.Server(server)
	if !ok {
		return admin.ErrUnknownServer
	}
	return mapPoolErr(v.Pool.Reset(address, now))
}

func mapPoolErr(err error) error {
	if errors.Is(err, balance.ErrUnknownAddress) {
		return admin.ErrUnknownAddress
	}
	return err
}

// StartServer implements admin.Runtime.
func (r *proxyRuntime) StartServer(ctx context.Context, server string) error {
	if err := r.managed(server); err != nil {
		return err
	}
	return r.Manager.Start(ctx, server)
}

// StopServer implements admin.Runtime.
func (r *proxyRuntime) StopServer(ctx context.Context, server string) error {
	if err := r.managed(server); err != nil {
		return err
	}
	return r.Manager.Stop(ctx, server)
}

func (r *proxyRuntime) managed(server string) error {
	if _, ok := r.Proxy.Server(server); !ok {
		return admin.ErrUnknownServer
	}
	if r.Manager == nil || !r.Manager.Managed(server) {
		return admin.ErrNotManaged
	}
	return nil
}

// Stats implements admin.Runtime.
func (r *proxyRuntime) Stats(now time.Time) admin.Stats {
	c := r.Proxy.Counters()
	cps, rps := r.rates.observe(now, c.Accepted, c.Rejected)
	return admin.Stats{
		Bind: r.Bind, StartedAt: c.StartedAt, UptimeSecs: now.Sub(c.StartedAt).Seconds(),
		PlayersOnline: c.Players, ConnectionsActive: c.Active,
		ConnectionsAccepted: c.Accepted, ConnectionsRejected: c.Rejected,
		ConnectionsPerSec: cps, RejectionsPerSec: rps, Version: r.Version,
	}
}

// rateWindow turns monotonic counters into per-second rates between two readings
// at least a second apart.
type rateWindow struct {
	mu                 sync.Mutex
	at                 time.Time
	accepted, rejected uint64
	cps, rps           float64
}

func (w *rateWindow) observe(now time.Time, accepted, rejected uint64) (float64, float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at.IsZero() {
		w.at, w.accepted, w.rejected = now, accepted, rejected
		return 0, 0
	}
	if d := now.Sub(w.at).Seconds(); d >= 1 {
		w.cps = float64(accepted-w.accepted) / d
		w.rps = float64(rejected-w.rejected) / d
		w.at, w.accepted, w.rejected = now, accepted, rejected
	}
	return w.cps, w.rps
}

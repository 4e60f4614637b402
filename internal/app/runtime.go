package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/player"
	"github.com/infrarust-go/infrarust/internal/proxy"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// runtime adapts the running proxy and manager to the Runtime the admin API serves.
type runtime struct {
	proxy   *proxy.Proxy
	manager *manager.Manager
	version string
	bind    string

	rates rateWindow
}

// runtime is the admin API's view of the app; one per app, so the rate window is shared.
func (a *App) runtime(version string) *runtime {
	if a.rt == nil {
		a.rt = &runtime{proxy: a.proxy, manager: a.mgr, version: version, bind: a.cfg.Bind}
	}
	return a.rt
}

// Servers implements admin.Runtime.
func (r *runtime) Servers(now time.Time) []admin.ServerInfo {
	views := r.proxy.Servers(now)
	out := make([]admin.ServerInfo, 0, len(views))
	reasons := map[string]string{}
	for _, st := range r.manager.Snapshot() {
		reasons[st.ID] = st.Reason
	}
	maint := r.proxy.Maintenance()
	for _, v := range views {
		info := admin.ServerInfo{
			ID: v.ID, Domains: v.Config.Domains, Strategy: string(v.Strategy),
			AddressCount: len(v.Config.Addresses), Players: v.Players, ProxyMode: string(v.Config.ProxyMode),
			HealthyCount: v.Serving(), UnknownCount: admin.CountUnknown(v.Backends),
			Maintenance: slices.Contains(maint, v.ID),
		}
		if sm := v.Config.ServerManager; sm != nil {
			info.State, info.ManagerType, info.StateReason = string(r.manager.State(v.ID)), sm.Type, reasons[v.ID]
		}
		out = append(out, info)
	}
	return out
}

// Backends implements admin.Runtime.
func (r *runtime) Backends(server string, now time.Time) (admin.Backends, error) {
	v, ok := r.proxy.Server(server, now)
	if !ok {
		return admin.Backends{}, admin.ErrUnknownServer
	}
	out := admin.Backends{Server: server, Strategy: string(v.Strategy), Backends: make([]admin.Backend, 0, len(v.Backends))}
	for _, b := range v.Backends {
		out.Backends = append(out.Backends, admin.BackendFrom(b, now))
	}
	return out, nil
}

// SetDrain implements Runtime.
func (r *runtime) SetDrain(server, address string, drained bool, now time.Time) error {
	return mapProxyErr(r.proxy.SetDrain(server, address, drained, now))
}

// SetMaintenance implements Runtime.
func (r *runtime) SetMaintenance(server string, on bool) error {
	return mapProxyErr(r.proxy.SetMaintenance(server, on))
}

// Reset implements Runtime.
func (r *runtime) Reset(server, address string, now time.Time) error {
	return mapProxyErr(r.proxy.ResetBackend(server, address, now))
}

// mapProxyErr turns the proxy's lookup errors into the API's.
func mapProxyErr(err error) error {
	switch {
	case errors.Is(err, proxy.ErrUnknownServer):
		return admin.ErrUnknownServer
	case errors.Is(err, balance.ErrUnknownAddress):
		return admin.ErrUnknownAddress
	}
	return err
}

// StartServer implements admin.Runtime.
func (r *runtime) StartServer(ctx context.Context, server string) error {
	if err := r.managed(server); err != nil {
		return err
	}
	return r.manager.Start(ctx, server)
}

// StopServer implements admin.Runtime.
func (r *runtime) StopServer(ctx context.Context, server string) error {
	if err := r.managed(server); err != nil {
		return err
	}
	return r.manager.Stop(ctx, server)
}

func (r *runtime) managed(server string) error {
	if _, ok := r.proxy.Server(server, time.Now()); !ok {
		return admin.ErrUnknownServer
	}
	if !r.manager.Managed(server) {
		return admin.ErrNotManaged
	}
	return nil
}

// Stats implements admin.Runtime.
func (r *runtime) Stats(now time.Time) admin.Stats {
	c := r.proxy.Counters()
	cps, rps := r.rates.observe(now, c.Accepted, c.Rejected)
	return admin.Stats{
		Bind: r.bind, StartedAt: c.StartedAt, UptimeSecs: now.Sub(c.StartedAt).Seconds(),
		PlayersOnline: c.Players, ConnectionsActive: c.Active,
		ConnectionsAccepted: c.Accepted, ConnectionsRejected: c.Rejected,
		ConnectionsPerSec: cps, RejectionsPerSec: rps, Version: r.version,
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

// Players implements admin.PlayerRuntime.
func (r *runtime) Players(server string) []admin.Player {
	list := r.proxy.Players(server)
	out := make([]admin.Player, 0, len(list))
	for _, p := range list {
		out = append(out, playerJSON(p))
	}
	return out
}

func playerJSON(p proxy.PlayerInfo) admin.Player {
	return admin.Player{
		Name: p.Name, UUID: p.UUID, Server: p.Server, Address: p.Address, ClientIP: p.Client.Addr().String(),
		Protocol: p.Protocol, Version: p.Version, ProxyMode: string(p.Mode), Since: p.Since, Switchable: p.Switchable,
	}
}

// SendPlayer implements admin.PlayerRuntime.
func (r *runtime) SendPlayer(ctx context.Context, name, server string, force bool) (admin.Player, error) {
	p, err := r.proxy.SendPlayer(ctx, name, server, force)
	return playerJSON(p), mapPlayerErr(err)
}

// KickPlayer implements admin.PlayerRuntime.
func (r *runtime) KickPlayer(name, reason string) error {
	return mapPlayerErr(kick(r.proxy, name, reason))
}

// kick disconnects a player through his handle: with reason on his screen on
// intercepted servers; a passthrough player's stream is closed (the proxy
// cannot write into a stream it only forwards).
func kick(px *proxy.Proxy, name, reason string) error {
	pl, err := px.Player(name)
	if err != nil {
		return err
	}
	if reason == "" {
		reason = admin.DefaultKickReason
	}
	pl.Kick(reason)
	return nil
}

// MessagePlayer implements admin.PlayerRuntime: the line goes through his handle.
func (r *runtime) MessagePlayer(name, text string) error {
	pl, err := r.proxy.Player(name)
	if err != nil {
		return mapPlayerErr(err)
	}
	if err := pl.Tell(text); err != nil {
		if errors.Is(err, player.ErrNotIntercepted) {
			return admin.ErrNotIntercepted
		}
		return err
	}
	return nil
}

// Broadcast implements admin.PlayerRuntime: every player of server ("" all)
// the proxy speaks to is told text through his handle.
func (r *runtime) Broadcast(text, server string) int {
	n := 0
	for _, p := range r.proxy.Players(server) {
		if pl, err := r.proxy.Player(p.Name); err == nil && pl.Tell(text) == nil { // a passthrough player's Tell fails
			n++
		}
	}
	return n
}

// MovePlayers implements admin.PlayerRuntime.
func (r *runtime) MovePlayers(ctx context.Context, server, address string) (admin.MoveResult, error) {
	res, err := r.proxy.MovePlayers(ctx, server, address)
	return admin.MoveResult{Moved: res.Moved, Stayed: res.Stayed}, mapPlayerErr(err)
}

// mapPlayerErr turns the proxy's player errors into the API's, keeping the
// proxy's words (they say what to do).
func mapPlayerErr(err error) error {
	if srv, rule, ok := proxy.RefusedBy(err); ok {
		return &admin.Refusal{Server: srv, Rule: rule, Text: err.Error()}
	}
	for _, m := range []struct{ from, to error }{
		{proxy.ErrUnknownPlayer, admin.ErrUnknownPlayer},
		{proxy.ErrNotSwitchable, admin.ErrNotSwitchable},
		{proxy.ErrOtherNetwork, admin.ErrOtherNetwork},
		{proxy.ErrUnknownServer, admin.ErrUnknownServer},
	} {
		if errors.Is(err, m.from) {
			return fmt.Errorf("%w: %s", m.to, err.Error())
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		// Every other failure is the target refusing or not answering: the player
		// stayed where they were.
		return fmt.Errorf("%w: %s", admin.ErrMoveFailed, err.Error())
	}
	return err
}

package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/fleet"
	"github.com/infrarust-go/infrarust/internal/manager"
	"github.com/infrarust-go/infrarust/internal/metrics"
	"github.com/infrarust-go/infrarust/internal/proxy"
)

// The [fleet] wiring: the fleet reads and changes this proxy through fleetLocal
// (the drain store, the ban store and the running proxy), the admin API shares
// operator changes through fleetAdmin, and the server manager asks it for wake
// locks and the other proxies' players. Without [fleet] none of this exists and
// every component gets nil.

// buildFleet prepares the fleet membership when [fleet] is configured; it does
// no I/O, so a Redis that is down never stops serve from starting.
func (a *App) buildFleet(opts Options) error {
	if !a.cfg.Fleet.Enabled() {
		return nil
	}
	f, err := fleet.New(fleet.Options{
		Config: a.cfg.Fleet, DataDir: a.cfg.Web.DataDir, Local: fleetLocal{a}, LocalCount: a.localPlayers,
		Bus: a.bus, Logger: a.log, Version: opts.Version, StartedAt: time.Now(),
	})
	if err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	a.fleet = f
	a.log.Info("this proxy is part of a fleet", "id", f.ID(), "redis", f.Status().Redis)
	return nil
}

// managerFleet is the manager's view of the fleet; nil without [fleet].
func (a *App) managerFleet() manager.Fleet {
	if a.fleet == nil {
		return nil
	}
	return a.fleet
}

// proxyFleet is what the status path asks the fleet; nil without [fleet] (a nil
// *fleet.Fleet must not become a non-nil interface).
func (a *App) proxyFleet() proxy.FleetCounter {
	if a.fleet == nil {
		return nil
	}
	return a.fleet
}

// proxyDirectory is what in-game commands ask the fleet; nil without [fleet].
func (a *App) proxyDirectory() proxy.FleetDirectory {
	if a.fleet == nil {
		return nil
	}
	return fleetDirectory{a.fleet}
}

type fleetDirectory struct{ f *fleet.Fleet }

func (d fleetDirectory) RemotePlayers(ctx context.Context) ([]proxy.RemotePlayer, error) {
	list, err := d.f.RemotePlayers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]proxy.RemotePlayer, len(list))
	for i, p := range list {
		out[i] = proxy.RemotePlayer{Name: p.Name, Server: p.Server, Proxy: p.Proxy}
	}
	return out, nil
}

func (d fleetDirectory) Command(proxyID, action, player, arg string) {
	d.f.Command(proxyID, action, player, arg)
}

// proxySessions is how logins announce their player to the fleet; nil without
// [fleet].
func (a *App) proxySessions() proxy.FleetSessions {
	if a.fleet == nil {
		return nil
	}
	return a.fleet
}

// adminFleet is the admin API's view of the fleet; nil without [fleet].
func (a *App) adminFleet() admin.Fleet {
	if a.fleet == nil {
		return nil
	}
	return fleetAdmin{f: a.fleet, timeout: a.cfg.Fleet.Timeout.D()}
}

// startFleet joins the fleet in the background, once the proxy listens (its
// addresses go in the fleet view); the membership ends with ctx, after the
// sessions are gone, so departures are published.
func (a *App) startFleet(ctx context.Context, proxyAddr, adminAddr string) {
	f := a.fleet
	if f == nil {
		return
	}
	f.SetAddresses(proxyAddr, adminAddr)
	a.met.WatchFleet(func() metrics.FleetSample {
		st := f.Status()
		return metrics.FleetSample{Connected: st.Connected, LiveProxies: st.LiveProxies, Pending: st.Pending, RedisCommands: f.Ops(), Rejected: f.Rejected()}
	})
	a.goroutine(func() {
		followed := make(chan struct{})
		go func() {
			defer close(followed)
			a.followPermissions(ctx)
		}()
		f.Run(ctx)
		<-followed // the Redis client is closed after its last reader
		_ = f.Close()
	})
}

// Fleet is the proxy's fleet membership, nil without [fleet]: the proxy's status
// path reads the fleet-wide online count from it (OnlineCount, RemoteOnline).
func (a *App) Fleet() *fleet.Fleet { return a.fleet }

// localPlayers is this proxy's count on one server, for fleet.OnlineCount.
func (a *App) localPlayers(server string) int {
	if v, ok := a.proxy.Server(server, time.Now()); ok {
		return v.Players
	}
	return 0
}

// fleetLocal is this proxy as the fleet changes it: the same stores and pools
// the admin API changes, so a drain from the fleet is indistinguishable from one
// made here (it survives restarts, and reloads re-apply it).
type fleetLocal struct{ a *App }

func (l fleetLocal) Drained(server, address string) bool { return l.a.drains.Drained(server, address) }

func (l fleetLocal) SetDrained(server, address string, drained bool) error {
	if err := l.a.drains.Set(server, address, drained); err != nil {
		return err
	}
	return ignoreUnknown(l.a.proxy.SetDrain(server, address, drained, time.Now()))
}

func (l fleetLocal) Reset(server, address string) error {
	return ignoreUnknown(l.a.proxy.ResetBackend(server, address, time.Now()))
}

// ignoreUnknown: a change for a server or address this proxy does not have is
// kept (stored drains apply if a reload adds it) but is no failure.
func ignoreUnknown(err error) error {
	if errors.Is(mapProxyErr(err), admin.ErrUnknownServer) || errors.Is(mapProxyErr(err), admin.ErrUnknownAddress) {
		return nil
	}
	return err
}

func (l fleetLocal) Drains() map[string][]string { return l.a.drains.All() }

func (l fleetLocal) InMaintenance(server string) bool {
	return slices.Contains(l.a.maint.All(), server)
}

// SetMaintenance stores a maintenance from the fleet, then applies it, as the
// admin API does; a server this proxy does not have is only stored (a reload
// that adds it applies it).
func (l fleetLocal) SetMaintenance(server string, on bool) error {
	if err := l.a.maint.Set(server, on); err != nil {
		return err
	}
	return ignoreUnknown(l.a.proxy.SetMaintenance(server, on))
}

func (l fleetLocal) Maintenances() []string { return l.a.maint.All() }

func (l fleetLocal) Bans() []bans.Ban { return l.a.bans.List(time.Now()) }

func (l fleetLocal) AddBan(b bans.Ban) error {
	saved, err := l.a.bans.Add(b, time.Now())
	if err != nil {
		return err
	}
	l.a.bus.Publish(events.BanCreated, saved)
	return nil
}

func (l fleetLocal) RemoveBan(t bans.Type, value string) error {
	removed, err := l.a.bans.Remove(t, value, time.Now())
	if err != nil {
		return err
	}
	l.a.bus.Publish(events.BanRemoved, removed)
	return nil
}

// SessionClaimed implements fleet.Local: the proxy settles a duplicate session.
func (l fleetLocal) SessionClaimed(key string, at time.Time, strength int, other, self string) {
	l.a.proxy.SessionClaimed(key, at, strength, other, self)
}

func (l fleetLocal) RunCommand(action, player, arg, from string) error {
	if action == "kick" {
		return kick(l.a.proxy, player, arg)
	}
	_, err := l.a.proxy.SendFromFleet(player, arg)
	return err
}

func (l fleetLocal) Players() []fleet.Player {
	list := l.a.proxy.Players("")
	out := make([]fleet.Player, 0, len(list))
	for _, p := range list {
		out = append(out, fleetPlayer(p))
	}
	return out
}

func fleetPlayer(p proxy.PlayerInfo) fleet.Player {
	j := playerJSON(p)
	return fleet.Player{Name: j.Name, UUID: j.UUID, Server: j.Server, Address: j.Address, ClientIP: j.ClientIP,
		Protocol: j.Protocol, Version: j.Version, ProxyMode: j.ProxyMode, Since: j.Since, Switchable: j.Switchable}
}

// fleetAdmin adapts the fleet to admin.Fleet; timeout bounds how long an
// operator's request waits for Redis to acknowledge a change.
type fleetAdmin struct {
	f       *fleet.Fleet
	timeout time.Duration
}

func (x fleetAdmin) ShareBackend(ctx context.Context, action admin.Action, server, address string) admin.FleetDelivery {
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	var r *fleet.Receipt
	switch action {
	case admin.ActionDrain:
		r = x.f.Drain(server, address, true)
	case admin.ActionEnable:
		r = x.f.Drain(server, address, false)
	default:
		r = x.f.Reset(ctx, server, address)
	}
	return delivery(r.Wait(ctx))
}

func (x fleetAdmin) ShareMaintenance(ctx context.Context, server string, on bool) admin.FleetDelivery {
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	return delivery(x.f.Maintenance(server, on).Wait(ctx))
}

func (x fleetAdmin) ShareBan(ctx context.Context, b bans.Ban, lifted bool) admin.FleetDelivery {
	ctx, cancel := context.WithTimeout(ctx, x.timeout)
	defer cancel()
	if lifted {
		return delivery(x.f.Unban(b.Type, b.Value).Wait(ctx))
	}
	return delivery(x.f.Ban(b).Wait(ctx))
}

func delivery(d fleet.Delivery) admin.FleetDelivery {
	return admin.FleetDelivery{State: string(d.State), Message: d.Message}
}

func (x fleetAdmin) Status() admin.FleetStatus {
	st := x.f.Status()
	now := time.Now()
	out := admin.FleetStatus{Enabled: true, ID: st.ID, Redis: st.Redis, Connected: st.Connected, Since: st.Since,
		LastError: st.LastError, PendingChanges: st.Pending, LiveProxies: st.LiveProxies, Players: st.Players,
		Proxies: make([]admin.FleetProxy, 0, len(st.Proxies)), ViewAt: st.ViewAt}
	for _, p := range st.Proxies {
		fp := admin.FleetProxy{ID: p.ID, Address: p.Address, Admin: p.Admin, Version: p.Version, StartedAt: p.StartedAt,
			Players: p.Players, LastHeartbeat: p.LastHeartbeat, HeartbeatAgeSecs: p.HeartbeatAgeSecs, Live: p.Live, Self: p.Self}
		if !p.StartedAt.IsZero() {
			fp.UptimeSecs = now.Sub(p.StartedAt).Seconds()
		}
		out.Proxies = append(out.Proxies, fp)
	}
	return out
}

func (x fleetAdmin) Players(ctx context.Context, server string) ([]admin.FleetPlayer, error) {
	list, err := x.f.Players(ctx, server)
	if errors.Is(err, fleet.ErrUnreachable) {
		why := strings.TrimPrefix(err.Error(), fleet.ErrUnreachable.Error()+": ")
		return nil, fmt.Errorf("%w: %s", admin.ErrFleetUnreachable, why)
	}
	if err != nil {
		return nil, err
	}
	out := make([]admin.FleetPlayer, 0, len(list))
	for _, p := range list {
		out = append(out, admin.FleetPlayer{Player: admin.Player{Name: p.Name, UUID: p.UUID, Server: p.Server,
			Address: p.Address, ClientIP: p.ClientIP, Protocol: p.Protocol, Version: p.Version, ProxyMode: p.ProxyMode,
			Since: p.Since, Switchable: p.Switchable}, Proxy: p.Proxy})
	}
	return out, nil
}

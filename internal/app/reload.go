package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

// Reload re-reads infrarust.toml and servers_dir (SIGHUP, /infrarust reload,
// POST /api/v1/reload) and puts every key that can change live in force
// without touching a session: commands, permissions, messages, rate limits,
// IP filters, verify and auth settings, webhooks, the forwarding secret...
// A key only a restart changes (binds, [web], [fleet], ...) keeps its running
// value and is named in the log. A file with an error keeps the whole
// running configuration, as a broken server file keeps its previous version.
func (a *App) Reload(reason string) error {
	_, err := a.reload(reason)
	return err
}

func (a *App) reload(reason string) (admin.ReloadResult, error) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	res := admin.ReloadResult{Changed: []string{}, Restart: []string{}, Errors: []string{}}
	cur := a.proxy.Config()
	if cur.Source == "" {
		fileErrs, err := a.reloadServersLocked(reason) // the embedded default does not change
		res.Errors = errStrings(fileErrs)
		if err == nil {
			err = errors.Join(fileErrs...)
		}
		return res, err
	}
	_ = a.notify.Reloading("reloading " + cur.Source + " (" + reason + ")")
	defer a.notify.Ready("serving; last reload: " + reason)
	main, err := config.LoadMain(cur.Source)
	if err == nil && a.override != nil {
		err = a.override(main)
	}
	if err != nil {
		a.log.Error("reload rejected; the running configuration stays in force", "file", cur.Source, "reason", reason, "err", err)
		a.met.ConfigReloaded(false, time.Now())
		return res, err
	}
	held := config.HoldRestartKeys(cur, main)
	main.Servers = cur.Servers // servers_dir is merged over the running servers
	next, fileErrs, err := mergeServersDir(main)
	if err != nil {
		a.log.Error("reload rejected; the running configuration stays in force", "err", err)
		a.met.ConfigReloaded(false, time.Now())
		return res, err
	}
	changed := config.Changed(config.Fingerprint(cur), config.Fingerprint(next))
	if err := a.applyServers(next, reason, fileErrs); err != nil {
		return res, err
	}
	// Webhooks after the rest took: their entries were checked with the file.
	if err := a.hooks.SetWebhooks(next.Webhooks, 5*time.Second); err != nil {
		a.log.Error("[[webhooks]] not reloaded; the running ones stay", "err", err)
	}
	a.hooksConfigured()
	live := slices.DeleteFunc(changed, config.NeedsRestart)
	a.log.Info("configuration reloaded", "file", cur.Source, "reason", reason, "changed", strings.Join(live, ","))
	if len(held) > 0 {
		a.log.Warn("these keys changed but only take effect at a restart; their running values stay", "keys", strings.Join(held, ","))
	}
	res.Changed, res.Restart, res.Errors = append(res.Changed, live...), append(res.Restart, held...), errStrings(fileErrs)
	return res, errors.Join(fileErrs...)
}

// ReloadServers re-reads servers_dir alone (its watcher): see applyServers.
func (a *App) ReloadServers(reason string) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	fileErrs, err := a.reloadServersLocked(reason)
	if err != nil {
		return err
	}
	return errors.Join(fileErrs...)
}

// reloadServersLocked returns the refused server files, or the error that
// refused the whole reload.
func (a *App) reloadServersLocked(reason string) ([]error, error) {
	_ = a.notify.Reloading("reloading servers_dir (" + reason + ")")
	defer a.notify.Ready("serving; last reload: " + reason)
	cur := a.proxy.Config()
	next, fileErrs, err := mergeServersDir(cur)
	if err != nil {
		a.log.Error("reload rejected; the previous servers stay in force", "err", err)
		a.met.ConfigReloaded(false, time.Now())
		return nil, err
	}
	if err := a.applyServers(next, reason, fileErrs); err != nil {
		return nil, err
	}
	return fileErrs, nil
}

// applyServers puts next in force in every component: the proxy, the server
// manager, the prober's targets and the stored drains. A file with an error
// keeps its previous version in force; a domain conflict rejects the whole
// reload.
func (a *App) applyServers(next *config.Config, reason string, fileErrs []error) error {
	next = a.withDiscovered(next) // discovery.go: a file wins a conflict
	if err := a.proxy.Apply(next); err != nil {
		a.log.Error("reload rejected; the previous servers stay in force", "err", err)
		a.met.ConfigReloaded(false, time.Now())
		return err
	}
	defer func() { a.met.ConfigReloaded(len(fileErrs) == 0, time.Now()) }()
	if err := a.mgr.Configure(next.Servers); err != nil {
		a.log.Error("server manager configuration", "err", err)
	}
	a.prober.SetTargets(a.proxy.HealthTargets())
	a.reapplyDrains()
	a.reapplyMaintenance()
	for _, e := range fileErrs {
		a.log.Error("server file rejected; its previous version stays in force", "err", e)
	}
	ids := make([]string, 0, len(next.Servers))
	for _, s := range next.Servers {
		ids = append(ids, s.ID)
	}
	a.log.Info("servers reloaded", "reason", reason, "servers", strings.Join(ids, ","), "rejected_files", len(fileErrs))
	a.bus.Publish(events.ConfigReload, events.Reload{Reason: reason, Servers: ids, Errors: errStrings(fileErrs)})
	return nil
}

// reapplyDrains puts every stored drain back on the running pools: a reload that
// removed an address and added it back (or a server file moved away and back)
// starts that address fresh, and the operator's drain must hold again at once,
// not only after a restart. Entries for addresses not configured right now stay
// stored for when they come back.
func (a *App) reapplyDrains() {
	now := time.Now()
	for server, addrs := range a.drains.All() {
		for _, addr := range addrs {
			_ = a.proxy.SetDrain(server, addr, true, now)
		}
	}
}

// reapplyMaintenance puts every stored maintenance on the proxy, so a server
// that leaves the config and comes back (or a restart) is still closed. Stored
// servers not configured now stay stored; it returns the ones applied.
func (a *App) reapplyMaintenance() []string {
	var applied []string
	for _, id := range a.maint.All() {
		if a.proxy.SetMaintenance(id, true) == nil {
			applied = append(applied, id)
		}
	}
	return applied
}

// mergeServersDir loads servers_dir over cur: files that failed to load keep their
// previous version (returned as fileErrs), removed files drop their server,
// built-in servers (such as --demo's) stay. A file that claims a domain another
// server holds is rejected like a broken file, naming that file: the server that
// holds the domain now keeps it, every other file still applies.
func mergeServersDir(cur *config.Config) (*config.Config, []error, error) {
	loaded, errs := config.LoadServersDir(cur.ServersPath, cur)
	var fileErrs []error
	for _, e := range errs {
		if !errors.Is(e, config.ErrDomainConflict) {
			fileErrs = append(fileErrs, e)
		}
	}
	prev := map[string]*config.Server{}
	for _, s := range cur.Servers {
		prev[s.ID] = s
	}
	byID := map[string]*config.Server{}
	for _, s := range loaded {
		byID[s.ID] = s
	}
	for _, old := range cur.Servers {
		if _, ok := byID[old.ID]; ok {
			continue
		}
		builtin := strings.HasPrefix(old.File, "<") // e.g. the --demo server
		if _, err := os.Stat(filepath.Join(cur.ServersPath, old.ID+".toml")); err == nil || builtin {
			byID[old.ID] = old
		}
	}
	fileErrs = append(fileErrs, resolveConflicts(byID, prev, holders(cur.Servers))...)
	next := *cur
	next.Servers = make([]*config.Server, 0, len(byID))
	for _, s := range byID {
		next.Servers = append(next.Servers, s)
	}
	sort.Slice(next.Servers, func(i, j int) bool { return next.Servers[i].ID < next.Servers[j].ID })
	if err := config.CheckDomainConflicts(next.Servers); err != nil {
		return nil, nil, err // cannot happen after resolveConflicts; never apply a conflict
	}
	return &next, fileErrs, nil
}

// holders maps each domain to the server that routes it now.
func holders(servers []*config.Server) map[string]string {
	h := map[string]string{}
	for _, s := range servers {
		for _, d := range s.Domains {
			h[d] = s.ID
		}
	}
	return h
}

// resolveConflicts rejects, in byID, each server whose new version claims a domain
// that another server also claims, unless it is the one holding that domain now:
// a rejected server falls back to its previous version (or is left out when it is
// new). It repeats until no claim collides, and returns one error per rejection.
func resolveConflicts(byID, prev map[string]*config.Server, held map[string]string) []error {
	var errs []error
	for range len(byID) + 1 {
		claims := map[string][]*config.Server{}
		ids := make([]string, 0, len(byID))
		for id := range byID {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			for _, d := range byID[id].Domains {
				claims[d] = append(claims[d], byID[id])
			}
		}
		rejected := false
		for _, id := range ids {
			s := byID[id]
			for _, d := range s.Domains {
				others := claims[d]
				if len(others) < 2 || held[d] == id || s == prev[id] {
					continue
				}
				rival := others[0]
				if rival == s {
					rival = others[1]
				}
				how := "it keeps its previous version"
				if prev[id] == nil {
					how = "it is not loaded"
					delete(byID, id)
				} else {
					byID[id] = prev[id]
				}
				errs = append(errs, fmt.Errorf("%s: domain %q is already claimed by server %q (%s); %s: %w", s.File, d, rival.ID, rival.File, how, config.ErrDomainConflict))
				rejected = true
				break
			}
		}
		if !rejected {
			break
		}
	}
	return errs
}

func errStrings(errs []error) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// reloadOn reloads on every receive from ch (SIGHUP).
func (a *App) reloadOn(ctx context.Context, ch <-chan os.Signal) {
	for {
		select {
		case <-ch:
			_ = a.Reload("SIGHUP")
		case <-ctx.Done():
			return
		}
	}
}

// watchServers starts watching servers_dir and returns the loop that reloads on
// its changes, debounced so an editor's write-rename-chmod burst is one reload.
// The watch is in place when it returns, before the proxy says it is ready: a
// change made after that is never missed. nil means no watch (SIGHUP still works).
func (a *App) watchServers() func(context.Context) {
	dir := a.cfg.ServersPath
	w, err := fsnotify.NewWatcher()
	if err != nil {
		a.log.Warn("cannot watch servers_dir; reload with SIGHUP", "err", err)
		return nil
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		a.log.Debug("servers_dir not watched (it may not exist); reload with SIGHUP", "dir", dir, "err", err)
		return nil
	}
	return func(ctx context.Context) {
		defer w.Close()
		a.reloadOnChanges(ctx, w)
	}
}

func (a *App) reloadOnChanges(ctx context.Context, w *fsnotify.Watcher) {
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			// A Kubernetes ConfigMap volume changes a file by swapping the "..data"
			// symlink; the <id>.toml links themselves do not change.
			if strings.HasSuffix(ev.Name, ".toml") || filepath.Base(ev.Name) == "..data" {
				timer = time.After(250 * time.Millisecond)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			a.log.Warn("servers_dir watch error", "err", err)
		case <-timer:
			timer = nil
			_ = a.ReloadServers("servers_dir changed")
		}
	}
}

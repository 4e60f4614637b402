package proxy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

// ReloadServers re-reads servers_dir. A file with an error keeps its previous
// version in force; a domain conflict rejects the whole reload.
func (p *Proxy) ReloadServers(reason string) error {
	cur := p.state.Load().cfg
	loaded, errs := config.LoadServersDir(cur.ServersPath, cur)
	var conflict error
	var fileErrs []error
	for _, e := range errs {
		if errors.Is(e, config.ErrDomainConflict) {
			conflict = errors.Join(conflict, e)
			continue
		}
		fileErrs = append(fileErrs, e)
	}
	if conflict != nil {
		p.log.Error("reload rejected; the previous servers stay in force", "err", conflict)
		return conflict
	}
	byID := map[string]*config.Server{}
	for _, s := range loaded {
		byID[s.ID] = s
	}
	// Keep the old version of a file that exists but failed to load.
	for _, old := range cur.Servers {
		if _, ok := byID[old.ID]; ok {
			continue
		}
		builtin := strings.HasPrefix(old.File, "<") // e.g. the --demo server
		if _, err := os.Stat(filepath.Join(cur.ServersPath, old.ID+".toml")); err == nil || builtin {
			byID[old.ID] = old
		}
	}
	next := *cur
	next.Servers = make([]*config.Server, 0, len(byID))
	for _, s := range byID {
		next.Servers = append(next.Servers, s)
	}
	sortServers(next.Servers)
	if err := config.CheckDomainConflicts(next.Servers); err != nil {
		p.log.Error("reload rejected; the previous servers stay in force", "err", err)
		return err
	}
	if err := p.Apply(&next); err != nil {
		p.log.Error("reload rejected; the previous servers stay in force", "err", err)
		return err
	}
	for _, e := range fileErrs {
		p.log.Error("server file rejected; its previous version stays in force", "err", e)
	}
	ids := make([]string, 0, len(next.Servers))
	for _, s := range next.Servers {
		ids = append(ids, s.ID)
	}
	p.log.Info("servers reloaded", "reason", reason, "servers", strings.Join(ids, ","), "rejected_files", len(fileErrs))
	p.bus.Publish(events.ConfigReload, map[string]any{"reason": reason, "servers": ids, "errors": errStrings(fileErrs)})
	return errors.Join(fileErrs...)
}

func errStrings(errs []error) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// watchServers reloads when servers_dir changes, debounced so an editor's
// write-rename-chmod burst is one reload.
func (p *Proxy) watchServers(ctx context.Context) {
	dir := p.state.Load().cfg.ServersPath
	w, err := fsnotify.NewWatcher()
	if err != nil {
		p.log.Warn("cannot watch servers_dir; reload with SIGHUP", "err", err)
		return
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		p.log.Debug("servers_dir not watched (it may not exist); reload with SIGHUP", "dir", dir, "err", err)
		return
	}
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if strings.HasSuffix(ev.Name, ".toml") {
				timer = time.After(250 * time.Millisecond)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			p.log.Warn("servers_dir watch error", "err", err)
		case <-timer:
			timer = nil
			_ = p.ReloadServers("servers_dir changed")
		}
	}
}

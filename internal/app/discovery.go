package app

import (
	"context"
	"fmt"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery"
	"github.com/infrarust-go/infrarust/internal/discovery/docker"
	"github.com/infrarust-go/infrarust/internal/discovery/kubernetes"
)

// Discovery in the composition root. Each enabled source ([docker], [kubernetes])
// runs in its own goroutine; each list it reports replaces its snapshot in a.disc
// and triggers a reload, which merges servers_dir with every snapshot (a file wins
// a conflict). Until a source has delivered its first list the proxy is not ready.
//
// Hooks in the other files of app: run calls startDiscovery (before the listener
// is marked ready); ReloadServers passes its merged files through withDiscovered.

// discoverySources builds the sources cfg turns on.
func (a *App) discoverySources(cfg *config.Config) ([]discovery.Source, error) {
	var out []discovery.Source
	if cfg.Docker.Enabled {
		src, err := docker.NewSource(cfg.Docker, cfg, docker.Options{Logger: a.log})
		if err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	if cfg.Kubernetes.Enabled {
		src, err := kubernetes.NewSource(cfg.Kubernetes, cfg, kubernetes.Options{Logger: a.log})
		if err != nil {
			return nil, err
		}
		out = append(out, src)
	}
	return out, nil
}

// startDiscovery starts every enabled source under ctx (the app's background
// context, so sources live until the end of shutdown).
func (a *App) startDiscovery(ctx context.Context) error {
	sources, err := a.discoverySources(a.cfg)
	if err != nil {
		return fmt.Errorf("discovery: %w", err)
	}
	if len(sources) == 0 {
		return nil
	}
	a.disc = discovery.NewSet()
	for _, src := range sources {
		name := src.Name()
		gate := "discovery " + name
		a.ready.block(gate, "waiting for the first list of "+name+" discovery")
		a.log.Info("discovery started", "source", name)
		a.goroutine(func() {
			src.Run(ctx, func(servers []*config.Server) {
				a.disc.Update(name, servers)
				_ = a.ReloadServers(name + " discovery") // file errors are logged there
				a.ready.unblock(gate)
			})
		})
	}
	return nil
}

// withDiscovered adds the discovered servers to next, whose servers come from
// servers_dir (and built-in ones such as --demo's). A discovered server that
// claims the id or a domain of another server is left out, and logged once while
// the conflict lasts.
func (a *App) withDiscovered(next *config.Config) *config.Config {
	if a.disc == nil {
		return next
	}
	files := make([]*config.Server, 0, len(next.Servers))
	for _, s := range next.Servers {
		if s.Discovered == "" {
			files = append(files, s)
		}
	}
	merged, fresh := a.disc.Merge(files)
	for _, c := range fresh {
		a.log.Warn("discovered server left out: a file (or another discovered server) claims it", "err", c)
	}
	next.Servers = merged
	return next
}

package manager

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery/docker"
)

// dockerProvider starts and stops one container through the Docker Engine API
// (type "docker"). The container is the daemon's, not the proxy's child: it is
// left running when the proxy exits, like a panel server.
type dockerProvider struct {
	client    *docker.Client
	container string
	// stopped is set while a stop is ours, so a non-zero exit after it (SIGKILL's
	// 137) reads as stopped, not crashed.
	stopped atomic.Bool
}

// dockerProviders is the ProviderFunc of type "docker"; conn is [docker], used
// when the server names no endpoint of its own.
func dockerProviders(conn config.Docker) ProviderFunc {
	return func(_ string, sm *config.ServerManager, _ func()) (Provider, error) {
		if sm.Container == "" {
			return nil, errors.New(`type "docker" needs container (the container's name or ID)`)
		}
		c := conn
		if sm.Endpoint != "" {
			c = config.Docker{Endpoint: sm.Endpoint}
		}
		if c.Endpoint == "" {
			c.Endpoint = config.DefaultDocker().Endpoint
		}
		client, err := docker.NewClient(c)
		if err != nil {
			return nil, err
		}
		return &dockerProvider{client: client, container: sm.Container}, nil
	}
}

// Start starts the container, or unpauses it when it is paused.
func (p *dockerProvider) Start(ctx context.Context) error {
	p.stopped.Store(false)
	in, err := p.client.Inspect(ctx, p.container)
	if err != nil {
		return p.explain(err)
	}
	if in.State.Paused {
		return p.explain(p.client.Unpause(ctx, p.container))
	}
	return p.explain(p.client.Start(ctx, p.container))
}

// Stop is `docker stop` with shutdown_timeout as its grace: the container's stop
// signal, then SIGKILL from the daemon.
func (p *dockerProvider) Stop(ctx context.Context, grace time.Duration) (string, error) {
	p.stopped.Store(true)
	if err := p.client.Stop(ctx, p.container, grace); err != nil {
		return "", p.explain(err)
	}
	in, err := p.client.Inspect(ctx, p.container)
	if err == nil && in.State.ExitCode == 137 && !in.State.OOMKilled {
		return fmt.Sprintf("killed by the Docker daemon after shutdown_timeout %s", grace), nil
	}
	return "stopped cleanly (docker stop)", nil
}

// Status maps the container's state; a Docker healthcheck that is still
// "starting" keeps it starting (the itzg image has one).
func (p *dockerProvider) Status(ctx context.Context) (Observation, error) {
	in, err := p.client.Inspect(ctx, p.container)
	if err != nil {
		return Observation{}, p.explain(err)
	}
	st := in.State
	switch st.Status {
	case "running":
		if st.Health != nil && st.Health.Status == "starting" {
			return Observation{Phase: PhaseStarting}, nil
		}
		return Observation{Phase: PhaseRunning}, nil
	case "restarting":
		return Observation{Phase: PhaseStarting}, nil
	case "removing":
		return Observation{Phase: PhaseStopping}, nil
	case "created", "paused":
		return Observation{Phase: PhaseStopped}, nil
	case "exited":
		if st.ExitCode == 0 || p.stopped.Load() {
			return Observation{Phase: PhaseStopped}, nil
		}
		reason := fmt.Sprintf("container %s exited with code %d", p.container, st.ExitCode)
		if st.OOMKilled {
			reason += " (killed for using too much memory: raise its memory limit)"
		}
		return Observation{Phase: PhaseCrashed, Reason: reason}, nil
	case "dead":
		return Observation{Phase: PhaseCrashed, Reason: "container " + p.container + " is dead: " + st.Error}, nil
	}
	return Observation{}, fmt.Errorf("container %s is in an unknown state %q", p.container, st.Status)
}

// explain adds what to check to a missing container.
func (p *dockerProvider) explain(err error) error {
	if errors.Is(err, docker.ErrNotFound) {
		return fmt.Errorf("%w; check [server_manager] container %q (docker ps -a shows the names)", err, p.container)
	}
	return err
}

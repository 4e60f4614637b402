package manager

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
)

// Options wires the manager into the proxy. Every zero value has a default, set in
// withDefaults and nowhere else.
type Options struct {
	// Bus receives server.state_change events; nil publishes nothing.
	Bus *events.Bus
	// Logger receives state changes and local servers' output; nil discards.
	Logger *slog.Logger
	// Clock drives idle accounting, poll scheduling and start_timeout; nil is the real clock.
	Clock Clock
	// OnReady is called for each address of a server that just came online, so the
	// balancer puts it in slow start; it runs outside the manager's lock.
	OnReady func(server, address string)
	// Tick is how often Run checks idle timers and due polls; 0 means 1s.
	Tick time.Duration
	// HTTPClient talks to panels; nil means a client with a 15s timeout.
	HTTPClient *http.Client
	// Providers maps a [server_manager] type to what builds its provider; nil means
	// the built-in ones (local, pterodactyl, crafty, docker, kubernetes). Tests add fakes here.
	Providers map[string]ProviderFunc
	// Docker and Kubernetes are how the docker and kubernetes types reach their
	// APIs ([docker], [kubernetes]); zero values are the defaults.
	Docker     config.Docker
	Kubernetes config.Kubernetes
	// ConsoleDir is where local servers with output "file" write their console
	// (<data_dir>/server-logs); "" sends it to Logger instead.
	ConsoleDir string
	// Fleet coordinates starts and idle stops with the other proxies of a
	// [fleet] (fleet.go); nil means this proxy is on its own.
	Fleet Fleet
}

// Clock is the manager's time source, injected so tests cross start_timeout,
// shutdown_after and poll intervals by moving a clock instead of sleeping.
type Clock interface {
	Now() time.Time
	// NewTimer returns a channel that receives once d has passed, and a stop
	// function that releases the timer when the wait ends first.
	NewTimer(d time.Duration) (<-chan time.Time, func())
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

const (
	// statusTimeout bounds one provider Status call.
	statusTimeout = 10 * time.Second
	// pingProtocol is the protocol version sent in readiness pings; servers answer status for any.
	pingProtocol = 767
)

// withDefaults is the one place the manager's own defaults live; a server's
// timings come from config.ServerManager.WithDefaults.
func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	if o.Providers == nil {
		o.Providers = map[string]ProviderFunc{
			"local":       localProviders(o.Logger, o.ConsoleDir),
			"pterodactyl": pteroProviders(o.HTTPClient),
			"crafty":      craftyProviders(o.HTTPClient),
			"docker":      dockerProviders(o.Docker),
			"kubernetes":  kubeProviders(o.Kubernetes),
		}
	}
	return o
}

// providerKey fingerprints the fields that make a different provider, so a reload
// that changes only timings keeps the running one.
func providerKey(sm *config.ServerManager) string {
	b, _ := json.Marshal([]any{sm.Type, sm.Command, sm.Args, sm.WorkingDir, sm.Env, sm.ReadyPattern, sm.URL, sm.APIKey, sm.ServerID,
		sm.Container, sm.Endpoint, sm.Namespace, sm.Workload, sm.Replicas})
	return string(b)
}

// newProvider builds e's provider; a config it cannot use gives a provider that
// fails with the reason, so players and operators see why instead of the server
// silently vanishing.
func (m *Manager) newProvider(e *entry, sm *config.ServerManager) (Provider, error) {
	build, ok := m.providers[sm.Type]
	var (
		p   Provider
		err error
	)
	if ok {
		p, err = build(e.id, sm, func() { m.providerChanged(e) })
		if err == nil {
			p = m.fleetProvider(p, e) // fleet.go
		}
	} else {
		err = fmt.Errorf("type %q is not one of %s", sm.Type, strings.Join(config.ManagerTypes, ", "))
	}
	if err != nil {
		err = fmt.Errorf("server %q: [server_manager]: %w", e.id, err)
		return brokenProvider{err: err}, err
	}
	return p, nil
}

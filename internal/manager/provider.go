package manager

import (
	"context"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// Phase is a provider's own view of the server, which the manager turns into a state.
type Phase int

// Phases a provider can report; the manager owns the mapping to player-facing states.
const (
	// PhaseStopped means down and not expected to be up (never started or stopped on request).
	PhaseStopped Phase = iota
	// PhaseStarting means the backend is booting and not ready yet.
	PhaseStarting
	// PhaseRunning means the backend says it runs; the manager still pings it before players go there.
	PhaseRunning
	// PhaseStopping means a stop is under way.
	PhaseStopping
	// PhaseCrashed means it went down without a stop being asked for.
	PhaseCrashed
)

// String names the phase for logs and errors.
func (p Phase) String() string {
	switch p {
	case PhaseStopped:
		return "stopped"
	case PhaseStarting:
		return "starting"
	case PhaseRunning:
		return "running"
	case PhaseStopping:
		return "stopping"
	case PhaseCrashed:
		return "crashed"
	}
	return "unknown"
}

// Observation is one answer of Provider.Status.
type Observation struct {
	// Phase is what the backend reports.
	Phase Phase
	// Reason explains a crash ("exited with exit status 1"); empty otherwise.
	Reason string
}

// Provider is how one kind of backend (a local process, a panel) is started,
// stopped and observed, so the manager's state machine is the same for all.
type Provider interface {
	// Start asks the backend to start and returns once the request was accepted;
	// readiness is observed through Status. A cancelled ctx must not leave a
	// process behind.
	Start(ctx context.Context) error
	// Stop stops the backend and waits until it is down, escalating after grace;
	// the string says how it ended ("stopped cleanly", "killed after 30s"). The
	// manager's ctx never ends for a ChildProcess (its grace is always given);
	// for others it ends at proxy exit, when the backend finishes the stop alone.
	Stop(ctx context.Context, grace time.Duration) (string, error)
	// Status reports the backend's current phase.
	Status(ctx context.Context) (Observation, error)
}

// The optional interfaces below let a provider tell the manager more than
// Provider does; the manager asks for them instead of knowing concrete types, so a
// new provider (docker, kubernetes, ...) gets the same treatment by implementing them.

// InstantStatus is implemented by providers whose Status needs no I/O, so a newly
// configured server shows its real state at once instead of "offline" until the
// first poll.
type InstantStatus interface {
	StatusNow() Observation
}

// ChildProcess is implemented by providers that run the server as a child of the
// proxy. Nobody else would stop it, so the manager stops it (with its own grace:
// stop command, shutdown_timeout, then signals) when the proxy exits or the server
// leaves the configuration; servers of other providers are left running.
type ChildProcess interface {
	// Alive reports whether the process runs (starting, running or stopping).
	Alive() bool
}

// ConsoleOutput is implemented by providers that see the server's console, so the
// admin API can show its last lines, which usually explain a crash.
type ConsoleOutput interface {
	LastOutput() []string
}

// ProviderFunc builds the provider of one server from its [server_manager] table
// (timings already defaulted). notify is the provider's "look now": call it when
// the backend changed on its own (a process exited, a ready line appeared), so
// the manager reads Status at once instead of at the next poll.
type ProviderFunc func(server string, sm *config.ServerManager, notify func()) (Provider, error)

// brokenProvider stands in for a server whose [server_manager] cannot be used,
// so players and operators see why instead of the server silently vanishing.
type brokenProvider struct{ err error }

func (b brokenProvider) Start(context.Context) error { return b.err }
func (b brokenProvider) Stop(context.Context, time.Duration) (string, error) {
	return "", b.err
}
func (b brokenProvider) Status(context.Context) (Observation, error) { return Observation{}, b.err }

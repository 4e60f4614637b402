// Package balance spreads the logins of one server across its addresses.
//
// A Pool is a pure, mutex-guarded state machine: it owns no goroutines and no
// sockets, and every method that depends on time takes `now` from the caller.
// It implements the strategies, weights, priority groups, slow start, passive
// health (windowed failure counting, ejection, exponential backoff, exactly one
// recovery attempt per backoff window), operator drain and capacity awareness
// described in docs/load-balancing.md.
package balance

import (
	"errors"
	"github.com/infrarust-go/infrarust/internal/config"
	"time"
)

// Strategy is how a server picks among its addresses (the configuration
// owns the vocabulary).
type Strategy = config.Strategy

// The strategies.
const (
	FirstAvailable = config.FirstAvailable
	RoundRobin     = config.RoundRobin
	LeastConn      = config.LeastConn
	Latency        = config.Latency
	Random         = config.Random
)

// StrategyNames are the strategies' configuration names.
func StrategyNames() []string { return config.StrategyNames() }

// ParseStrategy validates a config value; the empty string means first_available.
func ParseStrategy(s string) (Strategy, error) { return config.ParseStrategy(s) }

// State is what the admin API and the event stream report for one address.
type State string

const (
	// StateUnknown means nothing has checked the address yet (new, or the proxy just
	// started): it takes logins like a healthy one, but nobody is told it works until
	// a dial, a probe or a status answer proves it.
	StateUnknown State = "unknown"
	// StateHealthy means the address takes new logins and was last seen working.
	StateHealthy State = "healthy"
	// StateProbing means the single recovery attempt of the current backoff window is in flight.
	StateProbing State = "probing"
	// StateUnhealthy means the address was ejected and waits for its backoff to elapse.
	StateUnhealthy State = "unhealthy"
	// StateDraining is reported while an operator drain is on, whatever the health underneath.
	StateDraining State = "draining"
)

// Serving reports whether an address in this state takes new logins as a first
// choice: healthy, or unknown (selected like healthy until it is checked). Counts
// of "addresses that take players" use it, so an unchecked address is neither
// called healthy nor counted as down.
func (s State) Serving() bool { return s == StateHealthy || s == StateUnknown }

// States lists every state in the order the admin API documents them, so metrics
// and help texts enumerate one list.
func States() []State {
	return []State{StateUnknown, StateHealthy, StateProbing, StateUnhealthy, StateDraining}
}

// ErrUnknownAddress tells the admin API to answer 404 when an operator names an address the server does not list.
var ErrUnknownAddress = errors.New("address is not configured for this server")

// Address is one configured replica of a server.
type Address struct {
	// Address is "host:port" exactly as configured; it is the address's identity across reloads.
	Address string
	// Weight is the relative share of logins (values below 1 count as 1).
	Weight int
	// Priority groups addresses for failover: lower groups are used first.
	Priority int
}

// Defaults applied by NewPool and Update when an Options field is zero, so callers only set what they mean.
const (
	// DefaultFailThreshold is how many failures eject: one refused dial is noise, three in a row are not.
	DefaultFailThreshold = 3
	// DefaultFailWindow keeps failures spread over days from adding up (nginx's fail_timeout rule).
	DefaultFailWindow = 10 * time.Second
	// DefaultBackoffBase is the first pause before an ejected address gets its recovery attempt.
	DefaultBackoffBase = 30 * time.Second
	// DefaultBackoffMax caps the backoff so a fixed backend is never ignored for long.
	DefaultBackoffMax = 5 * time.Minute
	// DefaultFullTTL bounds how long a "server is full" status reading steers logins away.
	DefaultFullTTL = 30 * time.Second
)

// EWMAAlpha is the weight of the newest connect-time sample in the latency average: 0.3 follows a
// backend that slows down within a handful of logins without letting one slow dial dominate.
const EWMAAlpha = 0.3

// DegradedRecoverRatio is the hysteresis of DegradedLatency: an address becomes degraded when its
// connect EWMA rises above DegradedLatency and stops being degraded only once the EWMA falls below
// DegradedRecoverRatio × DegradedLatency, so a backend hovering at the threshold does not flap.
const DegradedRecoverRatio = 0.8

// LatencyTie is how close two connect EWMAs must be for the latency strategy to treat them as equal
// and let weights (smooth weighted round-robin) decide; sub-millisecond differences are noise.
const LatencyTie = time.Millisecond

// RecoveryTimeout bounds how long a recovery attempt may stay in flight without a result before the
// attempt is handed out again, so a lost probe or leaked lease cannot pin an address in "probing".
const RecoveryTimeout = time.Minute

// Options configures a Pool; zero fields take the defaults above.
type Options struct {
	// Strategy orders addresses inside a priority group; empty means first_available.
	Strategy Strategy
	// SlowStart is the ramp window of an address that just became healthy again; 0 disables the ramp.
	SlowStart time.Duration
	// SlowStartAggression shapes the ramp: w × (elapsed/SlowStart)^(1/aggression); default 1.0 (linear).
	SlowStartAggression float64
	// DegradedLatency (0 = off) lowers the weight of a slow address to w × max(0.1, 1 − ewma/(2×DegradedLatency))
	// while it is degraded; see DegradedRecoverRatio for the hysteresis.
	DegradedLatency time.Duration
	// FailThreshold failures inside FailWindow eject an address (default 3).
	FailThreshold int
	// FailWindow is how far back failures count (default 10s); older failures are forgotten.
	FailWindow time.Duration
	// BackoffBase is the first backoff after an ejection (default 30s); it doubles per consecutive ejection.
	BackoffBase time.Duration
	// BackoffMax caps the backoff (default 5m); it is also the period over which one ejection is forgiven
	// while the address stays healthy.
	BackoffMax time.Duration
	// ActiveProbing reserves the recovery attempt for the prober (DueForProbe) so no player pays a
	// connect timeout for it; false hands it to the first login after the backoff.
	ActiveProbing bool
	// FullTTL is how long a ReportStatus verdict of "full" is trusted (default 30s).
	FullTTL time.Duration
	// Rand returns a float in [0,1) for the random strategy; nil uses math/rand/v2.
	Rand func() float64
	// OnChange receives every state transition after the pool lock is released, in order; it must not block.
	OnChange func(Change)
}

// Change is one state transition, published as a backend.health_change event.
type Change struct {
	Address  string    // the configured "host:port"
	From, To State     // health states, or draining for drain on/off
	Reason   string    // for operators, e.g. "3 failures in 10s: connection refused"
	At       time.Time // the now passed to the call that caused it
}

func (o Options) normalized() Options {
	if s, err := ParseStrategy(string(o.Strategy)); err == nil {
		o.Strategy = s
	} else {
		o.Strategy = FirstAvailable
	}
	if o.SlowStart < 0 {
		o.SlowStart = 0
	}
	if o.SlowStartAggression <= 0 {
		o.SlowStartAggression = 1
	}
	if o.DegradedLatency < 0 {
		o.DegradedLatency = 0
	}
	if o.FailThreshold <= 0 {
		o.FailThreshold = DefaultFailThreshold
	}
	if o.FailWindow <= 0 {
		o.FailWindow = DefaultFailWindow
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = DefaultBackoffBase
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = DefaultBackoffMax
	}
	if o.BackoffMax < o.BackoffBase {
		o.BackoffMax = o.BackoffBase
	}
	if o.FullTTL <= 0 {
		o.FullTTL = DefaultFullTTL
	}
	return o
}

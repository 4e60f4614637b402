// Package events is the one in-process bus that the balancer, the proxy and the
// server manager publish to, and that the admin SSE stream, metrics and logs read.
// Publishing never blocks: a subscriber that falls behind loses events and is told
// how many it missed.
package events

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Type names a kind of event. It is declared here once: publishers, the admin SSE
// stream (its `event:` line and ?types= filter), metrics and the dashboard all use
// these constants, never string literals. The values are the wire names, as in the
// Rust Infrarust's admin event stream.
type Type string

// Event types.
const (
	BackendHealthChange Type = "backend.health_change"
	PlayerJoin          Type = "player.join"
	PlayerLeave         Type = "player.leave"
	PlayerSwitch        Type = "player.switch"
	ConfigReload        Type = "config.reload"
	BanCreated          Type = "ban.created"
	BanRemoved          Type = "ban.removed"
	StatsTick           Type = "stats.tick"
	ServerStateChange   Type = "server.state_change"
	// Lagged is synthesised for a subscriber that missed events; it cannot be
	// subscribed to because every subscriber gets it.
	Lagged Type = "lagged"
)

// Subscribable lists the types a client may ask for by name (every type but
// Lagged), in a stable order for help texts and error messages.
func Subscribable() []Type {
	return append([]Type{BackendHealthChange, PlayerJoin, PlayerLeave, PlayerSwitch, ConfigReload,
		BanCreated, BanRemoved, StatsTick, ServerStateChange,
		FleetConnectivity,               // fleet.go
		PlayerMoveRefused,               // moves.go
		PlayerVerify, VerifyAttackMode}, // verify.go
		playerEvents...) // player.go
}

// ParseType turns a name from a client (?types=) into a Type, so unknown names are
// refused with the list of known ones instead of silently matching nothing.
func ParseType(s string) (Type, error) {
	t := Type(strings.TrimSpace(s))
	if t == Lagged || slices.Contains(Subscribable(), t) {
		return t, nil
	}
	names := make([]string, 0, 8)
	for _, k := range Subscribable() {
		names = append(names, string(k))
	}
	return "", fmt.Errorf("unknown event type %q; known types: %s", s, strings.Join(names, ", "))
}

// Event is one thing that happened; Data is JSON-encodable. Its JSON form is
// exactly what one SSE `data:` line carries.
type Event struct {
	Type Type      `json:"type"`
	Time time.Time `json:"timestamp"`
	Data any       `json:"data"`
}

// HealthChange is the Data of a backend.health_change event.
type HealthChange struct {
	Server  string `json:"server"`
	Address string `json:"address"`
	From    string `json:"from"`
	To      string `json:"to"`
	Reason  string `json:"reason"`
}

// Player is the Data of player.join and player.leave events.
type Player struct {
	Server   string `json:"server"`
	Address  string `json:"address"`
	Username string `json:"username"`
	// UUID is the player's UUID when known: the authenticated one on intercepted
	// servers, the one a 1.20.2+ client claims on passthrough servers.
	UUID     string `json:"uuid,omitempty"`
	ClientIP string `json:"client_ip"`
	// Seconds the session lasted (leave only).
	DurationSecs float64 `json:"duration_secs,omitempty"`
	BytesIn      int64   `json:"bytes_in,omitempty"`
	BytesOut     int64   `json:"bytes_out,omitempty"`
}

// Switch is the Data of a player.switch event: a player moved between servers or
// addresses without leaving the proxy.
type Switch struct {
	Username    string `json:"username"`
	UUID        string `json:"uuid,omitempty"`
	FromServer  string `json:"from_server"`
	FromAddress string `json:"from_address"`
	ToServer    string `json:"to_server"`
	ToAddress   string `json:"to_address"`
	// Reason is why: "admin", "drain", "fallback: <why>", "plugin".
	Reason string `json:"reason"`
}

// Reload is the Data of a config.reload event: why the reload ran, the servers
// configured after it, and the files that were refused (with why).
type Reload struct {
	Reason  string   `json:"reason"`
	Servers []string `json:"servers"`
	Errors  []string `json:"errors"`
}

// ServerState is the Data of a server.state_change event, so dashboards and logs
// follow wakes and crashes.
type ServerState struct {
	Server string `json:"server"`
	From   string `json:"from"`
	To     string `json:"to"`
	Reason string `json:"reason"` // why, in words an operator can act on
}

// LaggedInfo is the Data of a lagged event.
type LaggedInfo struct {
	Missed uint64 `json:"missed"`
}

// Bus fans events out to subscribers.
type Bus struct {
	mu   sync.RWMutex
	subs map[*Sub]struct{}
	now  func() time.Time
}

// NewBus makes an empty bus.
func NewBus() *Bus { return &Bus{subs: map[*Sub]struct{}{}, now: time.Now} }

// Publish sends to every interested subscriber without ever blocking.
func (b *Bus) Publish(typ Type, data any) {
	if b == nil {
		return
	}
	ev := Event{Type: typ, Time: b.now().UTC(), Data: data}
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.subs {
		if !s.wants(typ) {
			continue
		}
		select {
		case s.ch <- ev:
		default:
			s.missed.Add(1)
		}
	}
}

// Wants reports that a subscriber would receive an event of typ: a publisher
// on a hot path builds the event only then (boxing it for Publish allocates).
func (b *Bus) Wants(typ Type) bool {
	if b == nil {
		return false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	for s := range b.subs {
		if s.wants(typ) {
			return true
		}
	}
	return false
}

// Subscribe returns a subscription with its own bounded buffer; no types means all.
func (b *Bus) Subscribe(buffer int, types ...Type) *Sub {
	if buffer < 1 {
		buffer = 1
	}
	s := &Sub{bus: b, ch: make(chan Event, buffer), types: slices.Clone(types)}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Subscribers counts live subscriptions (tests, metrics).
func (b *Bus) Subscribers() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.subs)
}

// Sub is one subscriber's view of the bus.
type Sub struct {
	bus    *Bus
	ch     chan Event
	types  []Type
	missed atomic.Uint64
	once   sync.Once
}

func (s *Sub) wants(typ Type) bool {
	return len(s.types) == 0 || slices.Contains(s.types, typ)
}

// Next waits for the next event; a Lagged event comes first when events were dropped.
func (s *Sub) Next(ctx context.Context) (Event, error) {
	if n := s.missed.Swap(0); n > 0 {
		return Event{Type: Lagged, Time: s.bus.now().UTC(), Data: LaggedInfo{Missed: n}}, nil
	}
	select {
	case ev := <-s.ch:
		return ev, nil
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// Close detaches the subscriber; safe to call twice.
func (s *Sub) Close() {
	s.once.Do(func() {
		s.bus.mu.Lock()
		delete(s.bus.subs, s)
		s.bus.mu.Unlock()
	})
}

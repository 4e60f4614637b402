package hooks

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/infrarust-go/infrarust/internal/events"
)

// Observers: the other half of the one event system. Fire publishes every
// player event on the bus after its handlers; what is published on the bus
// by anything else (bans, reloads, health and server state changes, joins,
// switches, verification) reaches the plugins' observers here. So one publish
// feeds plugins, webhooks, the SSE stream, metrics and telemetry alike.

// observerBuffer is how many events an observer may be behind before it
// misses some (it is then given a "lagged" event with the count).
const observerBuffer = 256

// observer is one registered function for bus events.
type observer struct {
	name    string
	types   []events.Type
	timeout time.Duration
	fn      func(ctx context.Context, e events.Event)
}

// Observe registers fn for the bus events of types (none: every type), as the
// admin SSE stream carries them. Observers run one event at a time, each on a
// goroutine of the dispatcher's, after the fact: they report, never decide,
// and never slow the path that published. An observer that falls behind
// misses events and is given an events.Lagged one with the count; a panic is
// logged and the observer goes on with the next event.
func Observe(r *Registry, name string, fn func(ctx context.Context, e events.Event), types ...events.Type) {
	if r == nil || fn == nil {
		panic(fmt.Sprintf("hooks.Observe(%q): nil registry or function", name))
	}
	if name == "" {
		name = fmt.Sprintf("observer #%d", len(r.observers)+1)
	}
	r.observers = append(r.observers, observer{name: name, types: types, timeout: DefaultHandlerTimeout, fn: fn})
}

// startObservers subscribes each observer to bus, on goroutines Close waits for.
func (d *Dispatcher) startObservers(bus *events.Bus, obs []observer) {
	if bus == nil || len(obs) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.stopObservers = cancel
	for _, o := range obs {
		sub := bus.Subscribe(observerBuffer, o.types...)
		d.observing.Add(1)
		go func() {
			defer d.observing.Done()
			defer sub.Close()
			for {
				ev, err := sub.Next(ctx)
				if err != nil {
					return
				}
				d.deliver(ctx, o, ev)
			}
		}()
	}
}

// deliver runs one observer on one event under its deadline (the context's;
// Go cannot stop a function that ignores it), its panic contained.
func (d *Dispatcher) deliver(ctx context.Context, o observer, ev events.Event) {
	octx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	start := d.now()
	defer func() {
		if r := recover(); r != nil {
			d.observerFailed(o, ev.Type, "panic", fmt.Sprint(r), string(debug.Stack()))
			return
		}
		if took := d.now().Sub(start); took > o.timeout {
			d.observerFailed(o, ev.Type, "timeout", "took "+took.Round(time.Millisecond).String(), "")
		}
	}()
	o.fn(octx, ev)
}

func (d *Dispatcher) observerFailed(o observer, typ events.Type, why, detail, stack string) {
	if d.met != nil {
		d.met.HandlerFailed(o.name, string(typ), why)
	}
	args := []any{"observer", o.name, "event", string(typ), "why", why, "detail", detail}
	if stack != "" {
		args = append(args, "stack", stack)
	}
	d.log.Warn("event observer failed", args...)
}

// waitObservers stops the observers and waits for them until ctx ends.
func (d *Dispatcher) waitObservers(ctx context.Context) {
	if d.stopObservers == nil {
		return
	}
	d.stopObservers()
	done := make(chan struct{})
	go func() { d.observing.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

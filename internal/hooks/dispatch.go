// Package hooks runs the player events of a login: the handlers compiled into the
// binary, the deciding webhooks and the notifying ones, each under its own
// deadline, so a panicking, slow or dead extension is logged and skipped and never
// takes a login (let alone the proxy) down.
//
// The proxy calls Fire at each event point, one line each:
//
//	if res := hooks.Fire(p.hooks, ctx, &hooks.PreLogin{...}); res.Denied() { ... }
//
// With nothing registered for an event and no subscriber of its type on the
// bus, Fire is a nil check, an array load and a read-locked look at the bus's
// subscribers: no allocation, no goroutine, no clock read.
package hooks

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/webhook"
)

// Metrics is told about extension failures; the proxy's Prometheus series hang off
// it. Every method must be cheap and must not block.
type Metrics interface {
	// HandlerFailed: a compiled-in handler panicked, overran its deadline, or was
	// skipped because too many of its calls are still running ("panic", "timeout", "stuck").
	HandlerFailed(handler, event, why string)
	// WebhookFailed: a deciding webhook did not answer usably; on_error applied.
	WebhookFailed(url, event string)
	// WebhookDropped: a notifying webhook's queue was full (or it was closing).
	WebhookDropped(url string)
}

// Options build a Dispatcher.
type Options struct {
	// Handlers are the compiled-in handlers; nil means none.
	Handlers *Registry
	// Webhooks are the [[webhooks]] entries (defaults filled by the config loader).
	Webhooks []config.Webhook
	// Logger receives failures (throttled) and decisions (debug); nil discards.
	Logger *slog.Logger
	// Metrics is told about failures; nil means nobody.
	Metrics Metrics
	// Client sends webhook requests; nil means webhook.NewClient().
	Client *http.Client
	// Now is the clock for event timestamps; nil means time.Now.
	Now func() time.Time
	// WebhookSleep waits between a notifying webhook's retries; nil waits on a
	// timer (tests pass one that does not).
	WebhookSleep func(ctx context.Context, d time.Duration) error
	// WebhookWorkers is the number of senders per notifying webhook; 0 means 4.
	WebhookWorkers int
	// Bus is where every fired event is published after its handlers (for the
	// SSE stream, metrics and the observers), and what the observers read; nil
	// publishes nothing.
	Bus *events.Bus
}

// Dispatcher runs every event's handlers and webhooks. A nil *Dispatcher is valid
// and runs nothing, so a proxy without extensions needs no special case.
type Dispatcher struct {
	handlers [numKinds][]*handler
	// hooks are the webhooks in force and what runs per kind; a reload of
	// [[webhooks]] swaps them (SetWebhooks).
	hooks   atomic.Pointer[webhookSet]
	hookMu  sync.Mutex // one SetWebhooks at a time
	client  *http.Client
	sleep   func(ctx context.Context, d time.Duration) error
	workers int

	reg *Registry // the plugins' commands and filters

	log *slog.Logger
	met Metrics
	now func() time.Time

	bus           *events.Bus
	stopObservers context.CancelFunc
	observing     sync.WaitGroup

	conns    atomic.Uint64 // connection ids
	seq      atomic.Uint64 // delivery sequence
	idPrefix string        // random per process, so delivery ids never repeat across restarts
}

type decider struct {
	*webhook.Decider
	denyOnError bool
	logged      atomic.Int64
}

type notifier struct {
	*webhook.Notifier
	url string
	cfg config.Webhook // as configured, to keep it across a reload that leaves it as it was
}

// webhookSet is one configuration's webhooks.
type webhookSet struct {
	active    [numKinds]bool // anything at all to run for the kind (handlers included)
	deciders  [numKinds][]*decider
	notifiers [numKinds][]*notifier
	all       []*notifier // each notifier once, for Close and Stats
	described []DescribedWebhook
}

// Described is what a dispatcher runs, for the metrics that must exist
// before the first failure.
type Described struct {
	// Handlers are each compiled-in handler's name and event.
	Handlers [][2]string
	Webhooks []DescribedWebhook
}

// DescribedWebhook is one [[webhooks]] entry.
type DescribedWebhook struct {
	URL       string
	Events    []string
	Notifying bool
}

// Describe says what d runs now.
func (d *Dispatcher) Describe() Described {
	var out Described
	if d == nil {
		return out
	}
	for k := range numKinds {
		for _, h := range d.handlers[k] {
			out.Handlers = append(out.Handlers, [2]string{h.name, Kind(k).String()})
		}
	}
	out.Webhooks = d.hooks.Load().described
	return out
}

// New builds the dispatcher and starts the notifying webhooks' workers; Close stops them.
func New(o Options) (*Dispatcher, error) {
	d := &Dispatcher{log: o.Logger, met: o.Metrics, now: o.Now, bus: o.Bus}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	d.idPrefix = strconv.FormatUint(binary.LittleEndian.Uint64(seed[:]), 36)
	d.conns.Store(binary.BigEndian.Uint64(seed[:]) >> 24) // random start, room for 2^40 connections
	d.reg = o.Handlers
	if o.Handlers != nil {
		for _, h := range o.Handlers.handlers {
			d.handlers[h.kind] = append(d.handlers[h.kind], h)
		}
	}
	d.client, d.sleep, d.workers = o.Client, o.WebhookSleep, o.WebhookWorkers
	set, _, err := d.buildWebhooks(o.Webhooks, nil)
	if err != nil {
		return nil, err
	}
	d.hooks.Store(set)
	if o.Handlers != nil {
		d.startObservers(o.Bus, o.Handlers.observers)
	}
	return d, nil
}

// buildWebhooks makes the set of webhooks ws; a notifier of old whose entry is
// unchanged is kept (its queue and counters go on), the others of old are
// returned to be closed.
func (d *Dispatcher) buildWebhooks(ws []config.Webhook, old *webhookSet) (*webhookSet, []*notifier, error) {
	set := &webhookSet{}
	for k := range numKinds {
		set.active[k] = len(d.handlers[k]) > 0
	}
	var kept []*notifier
	keep := func(w config.Webhook) *notifier {
		if old == nil {
			return nil
		}
		for _, n := range old.all {
			if reflect.DeepEqual(n.cfg, w) && !slices.Contains(kept, n) {
				kept = append(kept, n)
				return n
			}
		}
		return nil
	}
	var started []*notifier
	fail := func(err error) (*webhookSet, []*notifier, error) {
		for _, n := range started {
			_ = n.Close(context.Background())
		}
		return nil, nil, err
	}
	for i, w := range ws {
		w = w.WithDefaults()
		kinds := make([]Kind, 0, len(w.Events))
		for _, name := range w.Events {
			k, ok := ParseKind(name)
			if !ok {
				return fail(fmt.Errorf("webhooks[%d]: unknown event %q", i, name))
			}
			if w.Decide && !k.Decides() {
				return fail(fmt.Errorf("webhooks[%d]: event %q cannot be decided; list it in a webhook without decide", i, name))
			}
			kinds = append(kinds, k)
		}
		if d.client == nil {
			d.client = webhook.NewClient()
		}
		ep := webhook.Endpoint{URL: w.URL, Secret: []byte(w.Secret), Timeout: w.Timeout.D(), Client: d.client}
		set.described = append(set.described, DescribedWebhook{URL: w.URL, Events: w.Events, Notifying: !w.Decide})
		if w.Decide {
			dc := &decider{Decider: webhook.NewDecider(ep), denyOnError: w.OnError == "deny"}
			for _, k := range kinds {
				set.deciders[k] = append(set.deciders[k], dc)
				set.active[k] = true
			}
			continue
		}
		n := keep(w)
		if n == nil {
			url := w.URL
			n = &notifier{url: url, cfg: w, Notifier: webhook.NewNotifier(ep, webhook.NotifierOptions{
				Attempts: w.Attempts, QueueSize: w.QueueSize, Workers: d.workers,
				Sleep: d.sleep, Logger: d.log,
				OnDrop: func() {
					if d.met != nil {
						d.met.WebhookDropped(url)
					}
				},
				OnFail: func(event string) {
					if d.met != nil {
						d.met.WebhookFailed(url, event)
					}
				},
			})}
			started = append(started, n)
		}
		set.all = append(set.all, n)
		for _, k := range kinds {
			set.notifiers[k] = append(set.notifiers[k], n)
			set.active[k] = true
		}
	}
	var gone []*notifier
	if old != nil {
		for _, n := range old.all {
			if !slices.Contains(kept, n) {
				gone = append(gone, n)
			}
		}
	}
	return set, gone, nil
}

// SetWebhooks puts a reloaded [[webhooks]] in force: unchanged notifying
// webhooks go on as they were, removed ones send what they queued within
// grace, new ones start. An entry that does not build leaves the old set whole.
func (d *Dispatcher) SetWebhooks(ws []config.Webhook, grace time.Duration) error {
	if d == nil {
		if len(ws) > 0 {
			return errors.New("webhooks cannot be added to a proxy started without a dispatcher")
		}
		return nil
	}
	d.hookMu.Lock()
	defer d.hookMu.Unlock()
	set, gone, err := d.buildWebhooks(ws, d.hooks.Load())
	if err != nil {
		return err
	}
	d.hooks.Store(set)
	for _, n := range gone {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			_ = n.Close(ctx)
		}()
	}
	return nil
}

// Webhooks are the configured URLs of the webhooks in force, as each
// notifying and deciding one names itself in the metrics.
func (d *Dispatcher) Webhooks() (notifying []string) {
	if d == nil {
		return nil
	}
	for _, n := range d.hooks.Load().all {
		notifying = append(notifying, n.url)
	}
	return notifying
}

// Wants reports whether anything runs for events of kind k, for a caller that
// would otherwise build an expensive event for nothing.
func (d *Dispatcher) Wants(k Kind) bool {
	return d != nil && k < numKinds && (d.hooks.Load().active[k] || kindTypes[k] != "" && d.bus.Wants(kindTypes[k]))
}

// NextConnection returns a fresh Connection.ID; 0 from a nil dispatcher.
func (d *Dispatcher) NextConnection() uint64 {
	if d == nil {
		return 0
	}
	return d.conns.Add(1)
}

// Close stops the observers and the notifying webhooks: what is queued is sent
// until ctx ends, the rest is dropped. Deciding webhooks and handlers need no
// closing.
func (d *Dispatcher) Close(ctx context.Context) error {
	if d == nil {
		return nil
	}
	d.waitObservers(ctx)
	for _, n := range d.hooks.Load().all {
		_ = n.Close(ctx)
	}
	return nil
}

// WebhookStats are the counters of each notifying webhook, by URL (the admin API
// and tests read them).
func (d *Dispatcher) WebhookStats() map[string]webhook.Stats {
	out := map[string]webhook.Stats{}
	if d == nil {
		return out
	}
	for _, n := range d.hooks.Load().all {
		s := n.Stats()
		prev := out[n.url]
		prev.Delivered += s.Delivered
		prev.Failed += s.Failed
		prev.Dropped += s.Dropped
		prev.Retried += s.Retried
		prev.Queued += s.Queued
		out[n.url] = prev
	}
	return out
}

// Fire runs the handlers and webhooks of e's event and returns the decision, which
// is also left in e (a GameProfileRequest's new Profile too). ctx carries the
// session's trace and ends the wait when the proxy shuts down.
//
// The event is copied, never retained: the caller may build it on its stack, and
// with nothing registered for the event nothing is allocated.
func Fire[E any, P interface {
	*E
	Event
}](d *Dispatcher, ctx context.Context, e P) Result {
	if !d.Wants(P(nil).Kind()) {
		return Result{}
	}
	return fire(d, ctx, e)
}

// fire is Fire's slow path. Each handler works on its own copy of the event, so one
// that overruns its deadline (and keeps running) never races with the login; only
// the result (and a GameProfileRequest's profile) is taken from its copy.
func fire[E any, P interface {
	*E
	Event
}](d *Dispatcher, ctx context.Context, e P) Result {
	var zero P
	kind := zero.Kind()
	set := d.hooks.Load()
	cur := P(new(E))
	*cur = *e
	for _, h := range d.handlers[kind] {
		c := P(new(E))
		*c = *cur
		cloneProperties(c)
		if !d.call(ctx, h, c) {
			continue
		}
		d.adopt(kind, h.name, cur, c)
		if cur.Result().Action == Deny {
			break // a denial is final: nothing later can let the player in
		}
	}
	if cur.Result().Action != Deny {
		for _, w := range set.deciders[kind] {
			d.ask(ctx, w, kind, cur)
			if cur.Result().Action == Deny {
				break
			}
		}
	}
	res := cur.Result()
	// One publish, every reader: the notifying webhooks and the bus (the SSE
	// stream, metrics, observers) get the same envelope, the trace its event.
	typ := kindTypes[kind]
	publish := typ != "" && d.bus.Wants(typ)
	if len(set.notifiers[kind]) > 0 || publish {
		env := d.envelope(kind, cur)
		v := verdictOf(res)
		env.Result = &v
		for _, n := range set.notifiers[kind] {
			n.Notify(env)
		}
		if publish {
			d.bus.Publish(typ, env)
		}
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("infrarust event", trace.WithAttributes(
			attribute.String("infrarust.event", kind.String()),
			attribute.String("infrarust.hook.action", res.Action.String()),
			attribute.String("infrarust.hook.by", res.By)))
	}
	if res.Action != Continue {
		d.log.Debug("event decided", "event", kind.String(), "action", res.Action.String(), "by", res.By, "server", res.Server)
	}
	*e = *cur
	return res
}

// adopt takes the result a handler left in its copy c into cur, if the event allows
// it, and a GameProfileRequest's profile if it is valid.
func (d *Dispatcher) adopt(kind Kind, by string, cur, c Event) {
	if p, ok := c.(profiled); ok && kind == KindGameProfileRequest {
		np := *p.profile()
		if err := checkProfile(np); err != nil {
			d.log.Warn("handler set an invalid profile; the previous one stays", "handler", by, "err", err)
		} else {
			*cur.(profiled).profile() = np
		}
	}
	if ps, ok := c.(*PermissionsSetup); ok && ps.Permission != nil {
		cur.(*PermissionsSetup).Permission = ps.Permission
	}
	r := c.Result()
	if r == cur.Result() {
		return
	}
	if r.Action == Redirect && r.Server == "" {
		d.log.Warn("handler redirected to no server; ignored", "handler", by, "event", kind.String())
		return
	}
	r.By = by
	cur.dec().res = r
}

// checkProfile refuses a profile no backend would accept.
func checkProfile(p Profile) error {
	if p.Name == "" || len(p.Name) > 16 {
		return fmt.Errorf("name %q must be 1 to 16 characters", p.Name)
	}
	if p.UUID != "" {
		if _, err := auth.ParseUUID(p.UUID); err != nil {
			return fmt.Errorf("uuid %q: %w", p.UUID, err)
		}
	}
	return nil
}

// cloneProperties gives a handler's copy its own Properties slice, so a handler
// editing a property in place changes only its copy.
func cloneProperties(e Event) {
	if p, ok := e.(profiled); ok {
		pr := p.profile()
		pr.Properties = slices.Clone(pr.Properties)
	}
}

// callState tells the handler's goroutine and the waiting login apart on who got
// there first: the handler finishing, or its deadline.
const (
	running int32 = iota
	finished
	abandoned
)

// call runs one handler on its own goroutine under its deadline and reports
// whether it returned normally in time. A panic is recovered and logged; a handler
// past its deadline is left running (it cannot be stopped) and counted as stuck.
func (d *Dispatcher) call(ctx context.Context, h *handler, e Event) bool {
	kind := e.Kind()
	if h.stuck.Load() >= maxStuck {
		d.handlerFailed(h, kind, "stuck", fmt.Sprintf("%d calls still running past their deadline; skipped", maxStuck), "")
		return false
	}
	hctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	var state atomic.Int32
	done := make(chan any, 1) // nil, or the panic value
	go func() {
		var failure any
		defer func() {
			if r := recover(); r != nil {
				failure = panicked{value: r, stack: debug.Stack()}
			}
			if !state.CompareAndSwap(running, finished) {
				h.stuck.Add(-1) // the login gave up on this call long ago
				return
			}
			done <- failure
		}()
		h.call(hctx, e)
	}()
	select {
	case failure := <-done:
		if p, ok := failure.(panicked); ok {
			d.handlerFailed(h, kind, "panic", fmt.Sprint(p.value), string(p.stack))
			return false
		}
		return true
	case <-hctx.Done():
		h.stuck.Add(1)
		if !state.CompareAndSwap(running, abandoned) {
			// It finished at the same moment: take its answer after all.
			h.stuck.Add(-1)
			failure := <-done
			if p, ok := failure.(panicked); ok {
				d.handlerFailed(h, kind, "panic", fmt.Sprint(p.value), string(p.stack))
				return false
			}
			return true
		}
		d.handlerFailed(h, kind, "timeout", "no return within "+h.timeout.String(), "")
		return false
	}
}

type panicked struct {
	value any
	stack []byte
}

// handlerFailed counts every failure and logs at most one a minute per handler.
func (d *Dispatcher) handlerFailed(h *handler, kind Kind, why, detail, stack string) {
	if d.met != nil {
		d.met.HandlerFailed(h.name, kind.String(), why)
	}
	if !throttle(&h.logged, d.now()) {
		return
	}
	args := []any{"handler", h.name, "event", kind.String(), "failure", why, "detail", detail}
	if stack != "" {
		args = append(args, "stack", stack)
	}
	d.log.Error("extension handler failed and was skipped; the login went on without it (logged at most once a minute)", args...)
}

// ask sends the event to a deciding webhook and applies its verdict, or on_error.
func (d *Dispatcher) ask(ctx context.Context, w *decider, kind Kind, cur Event) {
	env := d.envelope(kind, cur)
	v, err := w.Decide(ctx, env)
	if err != nil {
		if d.met != nil {
			d.met.WebhookFailed(w.URL, kind.String())
		}
		if throttle(&w.logged, d.now()) {
			d.log.Warn("deciding webhook failed; on_error applied (logged at most once a minute)",
				"url", w.URL, "event", kind.String(), "deny", w.denyOnError, "err", err)
		}
		if w.denyOnError {
			cur.dec().res = Result{Action: Deny, Reason: webhookDownReason, By: w.URL}
		}
		return
	}
	r := resultOf(v)
	if !kind.Allows(r.Action) {
		if throttle(&w.logged, d.now()) {
			d.log.Warn("webhook answered an action the event does not allow; ignored", "url", w.URL, "event", kind.String(), "action", v.Action)
		}
		return
	}
	if r.Action == Continue {
		return
	}
	r.By = w.URL
	cur.dec().res = r
}

// webhookDownReason is what a player reads when a deciding webhook with
// on_error = "deny" could not be asked.
const webhookDownReason = "§cThe login service is unavailable, please try again later"

// envelope wraps an event for a webhook. Data is the dispatcher's own copy, which
// nobody writes to any more, so a notifier may encode it later on its own goroutine.
func (d *Dispatcher) envelope(kind Kind, e Event) *webhook.Envelope {
	seq := d.seq.Add(1)
	return &webhook.Envelope{
		ID:    d.idPrefix + "-" + strconv.FormatUint(seq, 10),
		Seq:   seq,
		Event: kind.String(),
		Time:  d.now().UTC(),
		Data:  e,
	}
}

func resultOf(v webhook.Verdict) Result {
	switch v.Action {
	case "deny":
		return Result{Action: Deny, Reason: v.Reason}
	case "redirect":
		return Result{Action: Redirect, Server: v.Server}
	case "limbo":
		return Result{Action: Limbo}
	}
	return Result{}
}

func verdictOf(r Result) webhook.Verdict {
	return webhook.Verdict{Action: r.Action.String(), Reason: r.Reason, Server: r.Server}
}

// throttle lets one log line through per minute per counter.
func throttle(last *atomic.Int64, now time.Time) bool {
	n := now.UnixNano()
	l := last.Load()
	if l != 0 && n-l < int64(time.Minute) {
		return false
	}
	return last.CompareAndSwap(l, n)
}

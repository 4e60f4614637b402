package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// NotifierOptions tune a notifying webhook; zero values take the defaults.
type NotifierOptions struct {
	// Attempts bounds the deliveries of one event (first included); 0 means 3.
	Attempts int
	// QueueSize bounds the events waiting; 0 means 1024.
	QueueSize int
	// Workers send in parallel, so one slow request does not hold the rest; 0 means 4.
	Workers int
	// Backoff is the wait before the first retry, doubled each time up to MaxBackoff;
	// 0 means 1 s (and 30 s).
	Backoff, MaxBackoff time.Duration
	// Sleep waits between retries; nil waits on a timer (tests pass their own).
	Sleep func(ctx context.Context, d time.Duration) error
	// OnDrop is told each event dropped because the queue was full or the notifier
	// closed (a metric's hook). It must not block.
	OnDrop func()
	// OnFail is told the event of each notification that was given up (its
	// attempts spent, or refused for good); it must not block.
	OnFail func(event string)
	// Logger receives delivery failures (throttled); nil discards.
	Logger *slog.Logger
}

// Notifier is a decide = false webhook: events are queued and sent by its own
// workers, so the login that fired one never waits; a dead or slow endpoint only
// fills the bounded queue, and what does not fit is dropped and counted.
type Notifier struct {
	ep   Endpoint
	opts NotifierOptions

	queue  chan *Envelope
	ctx    context.Context // ends at the end of Close: stops requests and retries
	cancel context.CancelFunc
	quit   chan struct{} // closed by Close: workers drain what is queued, then end
	once   sync.Once
	closed atomic.Bool
	wg     sync.WaitGroup

	delivered, failed, dropped, retried atomic.Uint64
	logged                              atomic.Int64 // unix nanos of the last failure logged
}

// Stats are a notifier's counters since it started.
type Stats struct {
	Delivered uint64 // events the endpoint accepted (2xx)
	Failed    uint64 // events given up after their attempts, or refused with a 4xx
	Dropped   uint64 // events never sent: the queue was full, or the notifier closed
	Retried   uint64 // retries sent
	Queued    int    // events waiting now
}

// NewNotifier starts a notifying webhook's workers; Close stops them.
func NewNotifier(ep Endpoint, opts NotifierOptions) *Notifier {
	if ep.Client == nil {
		ep.Client = NewClient()
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 3
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1024
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{ep: ep, opts: opts, queue: make(chan *Envelope, opts.QueueSize), quit: make(chan struct{})}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for range opts.Workers {
		n.wg.Add(1)
		go n.work()
	}
	return n
}

// Notify queues env without ever blocking; it returns false (and counts a drop)
// when the queue is full or the notifier is closed.
func (n *Notifier) Notify(env *Envelope) bool {
	if n.closed.Load() {
		n.drop()
		return false
	}
	select {
	case n.queue <- env:
		return true
	default:
		n.drop()
		return false
	}
}

func (n *Notifier) drop() {
	n.dropped.Add(1)
	if n.opts.OnDrop != nil {
		n.opts.OnDrop()
	}
}

// Stats returns the counters.
func (n *Notifier) Stats() Stats {
	return Stats{
		Delivered: n.delivered.Load(), Failed: n.failed.Load(), Dropped: n.dropped.Load(),
		Retried: n.retried.Load(), Queued: len(n.queue),
	}
}

// Close stops taking events, sends what is queued until ctx ends, then abandons the
// rest (counted as dropped) and returns when every worker has ended.
func (n *Notifier) Close(ctx context.Context) error {
	n.once.Do(func() {
		n.closed.Store(true)
		close(n.quit)
	})
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		n.cancel()
		<-done
	}
	n.cancel()
	for {
		select {
		case <-n.queue:
			n.drop()
		default:
			return nil
		}
	}
}

func (n *Notifier) work() {
	defer n.wg.Done()
	for {
		select {
		case env := <-n.queue:
			n.deliver(env)
			continue
		default:
		}
		select {
		case env := <-n.queue:
			n.deliver(env)
		case <-n.quit:
			// Drain mode: send what is left, then end.
			for {
				if n.ctx.Err() != nil {
					return
				}
				select {
				case env := <-n.queue:
					n.deliver(env)
				default:
					return
				}
			}
		}
	}
}

// deliver sends one event with retries; the body is encoded here, off the login path.
func (n *Notifier) deliver(env *Envelope) {
	body, err := json.Marshal(env)
	if err != nil {
		n.fail(env)
		n.logFailure(env, 0, err)
		return
	}
	wait := n.opts.Backoff
	for attempt := 1; ; attempt++ {
		status, _, err := n.ep.post(n.ctx, env, body)
		if err == nil && status >= 200 && status <= 299 {
			n.delivered.Add(1)
			return
		}
		if err == nil {
			err = fmt.Errorf("answered HTTP %d", status)
		}
		retryable := status == 0 || status == 429 || status >= 500
		if !retryable || attempt >= n.opts.Attempts || n.ctx.Err() != nil {
			n.fail(env)
			n.logFailure(env, attempt, err)
			return
		}
		if n.opts.Sleep(n.ctx, wait) != nil {
			n.fail(env)
			return
		}
		n.retried.Add(1)
		wait = min(2*wait, n.opts.MaxBackoff)
	}
}

// fail counts a notification given up.
func (n *Notifier) fail(env *Envelope) {
	n.failed.Add(1)
	if n.opts.OnFail != nil {
		n.opts.OnFail(env.Event)
	}
}

// logFailure logs at most one failure a minute per webhook: a dead endpoint at a
// thousand logins a second must not flood the log.
func (n *Notifier) logFailure(env *Envelope, attempts int, err error) {
	now := time.Now().UnixNano()
	last := n.logged.Load()
	if now-last < int64(time.Minute) || !n.logged.CompareAndSwap(last, now) {
		return
	}
	n.opts.Logger.Warn("webhook delivery failed (further failures are counted, logged at most once a minute)",
		"url", n.ep.URL, "event", env.Event, "attempts", attempts, "err", err,
		"failed_total", n.failed.Load(), "dropped_total", n.dropped.Load())
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

package hooks

import (
	"context"
	"fmt"
	"github.com/infrarust-go/infrarust/internal/command"
	"sync/atomic"
	"time"
)

// DefaultHandlerTimeout is how long a compiled-in handler may take when its
// registration does not say: past it the login goes on without the handler's result.
const DefaultHandlerTimeout = time.Second

// maxStuck is how many calls of one handler may still be running past their
// deadline; beyond it the handler is skipped without being called, so a handler
// that never returns costs a bounded number of goroutines, not one per login.
const maxStuck = 16

// Registry collects compiled-in handlers before the proxy starts. It is not safe
// for use once the dispatcher is built from it (registration happens in main).
type Registry struct {
	handlers   []*handler
	commands   []*command.Command
	packets    []PacketFilter
	transports []TransportFilter
	observers  []observer
}

// NewRegistry makes an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// HandlerOption changes how one handler runs.
type HandlerOption func(*handler)

// Timeout sets the handler's deadline (DefaultHandlerTimeout otherwise). The
// handler's context ends then, and the login goes on without its result.
func Timeout(d time.Duration) HandlerOption {
	return func(h *handler) {
		if d > 0 {
			h.timeout = d
		}
	}
}

// handler is one registered function, with its own failure bookkeeping.
type handler struct {
	name    string
	kind    Kind
	timeout time.Duration
	call    func(ctx context.Context, e Event)

	stuck  atomic.Int32 // calls still running past their deadline
	logged atomic.Int64 // unix nanos of the last failure logged
}

// On registers fn for the event type P (taken from fn's parameter:
// func(ctx context.Context, e *hooks.PreLogin)). Handlers of one event run in
// registration order, one at a time; name appears in logs when fn panics or
// overruns its deadline. On panics on a nil registry or fn, which is a programming
// error caught at start.
func On[P Event](r *Registry, name string, fn func(ctx context.Context, e P), opts ...HandlerOption) {
	if r == nil || fn == nil {
		panic(fmt.Sprintf("hooks.On(%q): nil registry or handler", name))
	}
	var zero P
	h := &handler{
		name:    name,
		kind:    zero.Kind(),
		timeout: DefaultHandlerTimeout,
		call:    func(ctx context.Context, e Event) { fn(ctx, e.(P)) },
	}
	if h.name == "" {
		h.name = fmt.Sprintf("%s handler #%d", h.kind, len(r.handlers)+1)
	}
	for _, o := range opts {
		o(h)
	}
	r.handlers = append(r.handlers, h)
}

// Len is the number of handlers registered.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	return len(r.handlers)
}

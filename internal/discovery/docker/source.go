package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// maxReconnectDelay caps the doubling wait between attempts to reach the daemon.
const maxReconnectDelay = time.Minute

// Options are the Source's collaborators; zero values have defaults.
type Options struct {
	// Logger receives the daemon's comings and goings and container problems.
	Logger *slog.Logger
	// After is the clock of the reconnect backoff and the poll interval; nil is
	// time.After. Tests pass one they fire by hand.
	After func(time.Duration) <-chan time.Time
}

// Source discovers servers from the labels of running containers: one list at
// start, then the daemon's event stream (start, die, pause, ...) re-lists at once,
// and a poll every poll_interval catches anything an event missed. A lost daemon
// is retried with a doubling delay and re-listed when it is back; the servers
// found last stay in force meanwhile (running containers usually outlive a daemon
// restart).
type Source struct {
	client *Client
	conn   config.Docker
	global *config.Config
	log    *slog.Logger
	after  func(time.Duration) <-chan time.Time

	mu       sync.Mutex
	problems map[Problem]bool // reported already; logged again only after they cleared
	// stopped are containers an event said stopped (die, destroy, pause) that the
	// daemon's list may still show running for a moment: they are left out until
	// an event says they run again or the list no longer has them.
	stopped map[string]bool
}

// NewSource builds the source from [docker]; global is the proxy-wide config that
// discovered servers inherit from (as files do).
func NewSource(conn config.Docker, global *config.Config, opts Options) (*Source, error) {
	c, err := NewClient(conn)
	if err != nil {
		return nil, fmt.Errorf("[docker]: %w", err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.After == nil {
		opts.After = time.After
	}
	return &Source{client: c, conn: conn, global: global, log: opts.Logger, after: opts.After, problems: map[Problem]bool{}, stopped: map[string]bool{}}, nil
}

// Name implements discovery.Source.
func (s *Source) Name() string { return "docker" }

// enabledFilter selects the containers that ask to be discovered; the value is
// checked by hand, because "1" and "True" count too and a filter matches exactly.
var enabledFilter = Filters{"label": {LabelEnable}}

// watchedEvents are the container events that change what is discovered.
var watchedEvents = Filters{
	"type":  {"container"},
	"event": {"start", "die", "destroy", "pause", "unpause", "rename"},
	"label": {LabelEnable},
}

// Run implements discovery.Source.
func (s *Source) Run(ctx context.Context, update func([]*config.Server)) {
	delay := s.conn.ReconnectDelay.D()
	var last []byte // fingerprint of the last list handed to update; nil before the first
	lost := false
	for ctx.Err() == nil {
		connected := false
		err := s.session(ctx, func(servers []*config.Server) {
			if !connected {
				connected, delay = true, s.conn.ReconnectDelay.D()
				if lost {
					s.log.Info("docker daemon reachable again; containers re-listed", "endpoint", s.client.Endpoint(), "servers", len(servers))
					lost = false
				}
			}
			fp := fingerprint(servers)
			if last != nil && bytes.Equal(fp, last) {
				return
			}
			last = fp
			update(servers)
		})
		if ctx.Err() != nil {
			return
		}
		if !lost {
			s.log.Warn("docker discovery: cannot reach the daemon; the servers found last stay in force, retrying", "endpoint", s.client.Endpoint(), "err", err, "retry_in", delay.String())
			lost = true
		} else {
			s.log.Debug("docker discovery: daemon still unreachable", "err", err, "retry_in", delay.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-s.after(delay):
		}
		delay = min(delay*2, maxReconnectDelay)
	}
}

// session opens the event stream, lists, then re-lists on every event and poll
// until the stream or a list fails. The stream is opened before the first list so
// that nothing happening in between is missed.
func (s *Source) session(ctx context.Context, found func([]*config.Server)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := s.client.Events(ctx, watchedEvents)
	if err != nil {
		return err
	}
	events := make(chan struct{}, 1)
	streamErr := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			ev, err := stream.Next()
			if err != nil {
				streamErr <- fmt.Errorf("docker event stream ended: %w", err)
				return
			}
			s.follow(ev)
			select { // one pending signal stands for any number of events
			case events <- struct{}{}:
			default:
			}
		}
	}()
	defer func() {
		cancel()
		stream.Close()
		wg.Wait()
	}()

	list := func() error {
		servers, err := s.list(ctx)
		if err != nil {
			return err
		}
		found(servers)
		return nil
	}
	if err := list(); err != nil {
		return err
	}
	var poll <-chan time.Time
	if p := s.conn.PollInterval.D(); p > 0 {
		poll = s.after(p)
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-streamErr:
			return err
		case <-events:
		case <-poll:
			poll = s.after(s.conn.PollInterval.D())
		}
		if err := list(); err != nil {
			return err
		}
	}
}

// follow takes a container's own word from its event: a stopped one leaves the
// servers at once, even while the daemon still lists it running for a moment.
func (s *Source) follow(ev Event) {
	id := ev.Actor.ID
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev.Action {
	case "die", "destroy", "pause":
		s.stopped[id] = true
	case "start", "unpause":
		delete(s.stopped, id)
	}
}

// list reads the running containers and builds the servers, logging new problems.
func (s *Source) list(ctx context.Context) ([]*config.Server, error) {
	cs, err := s.client.Containers(ctx, enabledFilter, false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	listed := make(map[string]bool, len(cs))
	kept := cs[:0]
	for _, c := range cs {
		listed[c.ID] = true
		if !s.stopped[c.ID] {
			kept = append(kept, c)
		}
	}
	for id := range s.stopped {
		if !listed[id] {
			delete(s.stopped, id) // the daemon caught up: its list is the truth again
		}
	}
	s.mu.Unlock()
	cs = kept
	servers, problems := Servers(cs, s.conn.Network, s.global)
	s.report(problems)
	return servers, nil
}

// report logs each problem once while it lasts.
func (s *Source) report(problems []Problem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := map[Problem]bool{}
	for _, p := range problems {
		now[p] = true
		if !s.problems[p] {
			s.log.Warn("docker discovery: "+p.Msg, "container", p.Container)
		}
	}
	s.problems = now
}

// fingerprint identifies a list of servers, so an unchanged list (a poll, an event
// about another container) is not applied again.
func fingerprint(servers []*config.Server) []byte {
	type entry struct {
		ID     string
		Server *config.Server
	}
	es := make([]entry, 0, len(servers))
	for _, s := range servers {
		es = append(es, entry{s.ID, s})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].ID < es[j].ID })
	b, err := json.Marshal(es)
	if err != nil || b == nil {
		return []byte(fmt.Sprintf("unencodable %p", &es)) // never equal to the last one: apply it
	}
	return b
}

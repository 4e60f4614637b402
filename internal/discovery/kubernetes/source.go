package kubernetes

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

// Options are the Source's collaborators; zero values have defaults.
type Options struct {
	// Logger receives list/watch failures and Service problems.
	Logger *slog.Logger
	// After is the clock of the backoff; nil is time.After.
	After func(time.Duration) <-chan time.Time
	// Client replaces the one built from [kubernetes] (tests).
	Client *Client
}

// Source discovers servers from annotated Services and their EndpointSlices,
// through two informers (list + watch, no polling). It reports once both have
// listed, then after every change that alters the servers.
type Source struct {
	client *Client
	cfg    config.Kubernetes
	global *config.Config
	log    *slog.Logger
	after  func(time.Duration) <-chan time.Time

	mu       sync.Mutex
	last     []byte
	problems map[Problem]bool
	failing  map[string]bool // informer path -> its failure was logged
}

// NewSource builds the source from [kubernetes]; global is what discovered
// servers inherit from (as files do).
func NewSource(k config.Kubernetes, global *config.Config, opts Options) (*Source, error) {
	c := opts.Client
	if c == nil {
		var err error
		if c, err = NewClient(k); err != nil {
			return nil, fmt.Errorf("[kubernetes]: %w", err)
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.After == nil {
		opts.After = time.After
	}
	return &Source{client: c, cfg: k, global: global, log: opts.Logger, after: opts.After,
		problems: map[Problem]bool{}, failing: map[string]bool{}}, nil
}

// Name implements discovery.Source.
func (s *Source) Name() string { return "kubernetes" }

// paths are the collections watched: one namespace (the proxy's own by default) or all.
func (s *Source) paths() (services, slices string) {
	ns := s.cfg.Namespace
	if ns == "" {
		ns = s.client.Namespace()
	}
	if ns == "*" {
		return "/api/v1/services", "/apis/discovery.k8s.io/v1/endpointslices"
	}
	return "/api/v1/namespaces/" + ns + "/services", "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices"
}

// Run implements discovery.Source.
func (s *Source) Run(ctx context.Context, update func([]*config.Server)) {
	svcPath, slicePath := s.paths()
	delay := s.cfg.ReconnectDelay.D()
	if delay <= 0 {
		delay = config.DefaultKubernetes().ReconnectDelay.D()
	}
	svcs := &informer[Service]{client: s.client, path: svcPath, selector: s.cfg.LabelSelector,
		meta: func(o *Service) *ObjectMeta { return &o.Metadata }, after: s.after, delay: delay, failed: s.failed(svcPath)}
	sls := &informer[EndpointSlice]{client: s.client, path: slicePath, selector: serviceNameLabel,
		meta: func(o *EndpointSlice) *ObjectMeta { return &o.Metadata }, after: s.after, delay: delay, failed: s.failed(slicePath)}

	var mu sync.Mutex // one recompute at a time, so updates leave in order
	changed := func(path string) func() {
		return func() {
			s.recovered(path)
			mu.Lock()
			defer mu.Unlock()
			services, ok1 := svcs.snapshot()
			slices, ok2 := sls.snapshot()
			if !ok1 || !ok2 {
				return
			}
			servers, problems := Servers(services, slices, s.global)
			s.report(problems)
			fp := fingerprint(servers)
			s.mu.Lock()
			same := s.last != nil && bytes.Equal(fp, s.last)
			s.last = fp
			s.mu.Unlock()
			if !same {
				update(servers)
			}
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); svcs.run(ctx, changed(svcPath)) }()
	go func() { defer wg.Done(); sls.run(ctx, changed(slicePath)) }()
	wg.Wait()
}

// failed logs a collection's first failure at warn, repeats at debug.
func (s *Source) failed(path string) func(error) {
	return func(err error) {
		s.mu.Lock()
		first := !s.failing[path]
		s.failing[path] = true
		s.mu.Unlock()
		if first {
			s.log.Warn("kubernetes discovery: list/watch failed; the servers found last stay in force, retrying", "collection", path, "err", err)
		} else {
			s.log.Debug("kubernetes discovery: still failing", "collection", path, "err", err)
		}
	}
}

// recovered logs the end of a collection's failure.
func (s *Source) recovered(path string) {
	s.mu.Lock()
	was := s.failing[path]
	delete(s.failing, path)
	s.mu.Unlock()
	if was {
		s.log.Info("kubernetes discovery: listing again", "collection", path)
	}
}

// report logs each Service problem once while it lasts.
func (s *Source) report(problems []Problem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := map[Problem]bool{}
	for _, p := range problems {
		now[p] = true
		if !s.problems[p] {
			s.log.Warn("kubernetes discovery: "+p.Msg+"; the Service is left out", "service", p.Service)
		}
	}
	s.problems = now
}

// fingerprint identifies a list of servers, so an unchanged one is not applied again.
func fingerprint(servers []*config.Server) []byte {
	sorted := append([]*config.Server(nil), servers...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	b, err := json.Marshal(sorted)
	if err != nil || b == nil {
		return []byte(fmt.Sprintf("unencodable %p", &sorted)) // never equal to the last one
	}
	return b
}

// Package discovery finds servers somewhere other than servers_dir (Docker labels,
// Kubernetes Services) and merges them with the file servers.
//
// A Source reports complete snapshots: every server it sees now, built as
// config.Server values through the same parser and validation as a servers/*.toml
// file (Build), so a discovered server behaves exactly like a written one. Merge
// puts the snapshots of every source next to the file servers: a file wins over a
// discovered server that claims the same id or domain, and the conflict is
// reported, never silently resolved. Between two sources the server whose id sorts
// first keeps a contested domain.
//
// The sources live in docker/ and kubernetes/; internal/app runs them and applies
// their snapshots as a reload.
package discovery

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/infrarust-go/infrarust/internal/config"
)

// Source finds servers and keeps the list live.
type Source interface {
	// Name is the origin written into config.Server.Discovered ("docker").
	Name() string
	// Run calls update with the complete list of servers it sees, at least once
	// after its first successful look (even when it found none, so a caller can
	// tell "nothing there" from "not looked yet"), and again whenever the list
	// changes. It returns when ctx ends; an unreachable backend is retried and the
	// last list stays in force meanwhile.
	Run(ctx context.Context, update func([]*config.Server))
}

// Build turns one discovered server, written as the table a servers/*.toml file
// would hold, into a config.Server through the file loader (same defaults, same
// validation). origin is the source ("docker"), id the server id, describe names
// where it came from for messages ("docker container mc-lobby-1"), and label maps
// a key of the table back to the label or annotation it came from, so an error
// says which label to fix.
func Build(origin, id, describe string, table map[string]any, global *config.Config, label func(key string) string) (*config.Server, error) {
	data, err := toml.Marshal(table)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describe, err)
	}
	s, err := config.ParseServer(data, id+".toml", global)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", describe, relabel(err, label))
	}
	s.File = describe
	s.Discovered = origin
	return s, nil
}

// relabel rewrites the loader's "file:line: key: message" problems as "label: message".
func relabel(err error, label func(string) string) string {
	var parts []string
	var joined interface{ Unwrap() []error }
	errs := []error{err}
	if errors.As(err, &joined) {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		var ce *config.Error
		if !errors.As(e, &ce) {
			parts = append(parts, e.Error())
			continue
		}
		msg := ce.Msg
		if ce.Key != "" {
			msg = strings.TrimPrefix(msg, ce.Key+": ")
			if l := label(ce.Key); l != "" {
				msg = l + ": " + msg
			}
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, "; ")
}

// Merge returns the file servers and the discovered ones together, sorted by id.
// A discovered server is left out when a file server has its id or any of its
// domains (the file wins), or when a discovered server whose id sorts before it
// already claims one of its domains; each is one error in conflicts.
func Merge(files []*config.Server, discovered []*config.Server) (merged []*config.Server, conflicts []error) {
	merged = make([]*config.Server, 0, len(files)+len(discovered))
	ids := map[string]*config.Server{}
	owner := map[string]*config.Server{}
	for _, s := range files {
		merged = append(merged, s)
		ids[s.ID] = s
		for _, d := range s.Domains {
			owner[d] = s
		}
	}
	found := append([]*config.Server(nil), discovered...)
	sort.Slice(found, func(i, j int) bool { return found[i].ID < found[j].ID })
next:
	for _, s := range found {
		if f, ok := ids[s.ID]; ok {
			conflicts = append(conflicts, fmt.Errorf("%s: server id %q is already taken by %s; the discovered server is left out", s.File, s.ID, f.File))
			continue
		}
		for _, d := range s.Domains {
			if o, ok := owner[d]; ok {
				who := "the file " + o.File
				if o.Discovered != "" {
					who = "server " + o.ID + " (" + o.File + ")"
				}
				conflicts = append(conflicts, fmt.Errorf("%s: domain %q is already claimed by %s; server %q is left out until the conflict is gone", s.File, d, who, s.ID))
				continue next
			}
		}
		merged = append(merged, s)
		ids[s.ID] = s
		for _, d := range s.Domains {
			owner[d] = s
		}
	}
	sort.Slice(merged, func(i, j int) bool { return merged[i].ID < merged[j].ID })
	return merged, conflicts
}

package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/atomicfile"
)

// DrainFileName is the drain store's file in the data dir.
const DrainFileName = "drained.json"

// DrainStore is the operator's drain intent, kept in <data_dir>/drained.json so a
// drained address stays drained across restarts. A change is on disk before Set
// returns, and a crash at any instant leaves either the old or the new file.
type DrainStore struct {
	mu      sync.Mutex
	path    string
	drained map[string][]string // server -> sorted addresses
}

// OpenDrainStore reads <dataDir>/drained.json; a missing file is an empty store and
// an unreadable or corrupt one (including one that holds null) is an error, so
// drains are never silently lifted. Temp files left by an interrupted write are
// removed first: they are never read, and without this they pile up.
func OpenDrainStore(dataDir string) (*DrainStore, error) {
	if dataDir == "" {
		dataDir = "."
	}
	s := &DrainStore{path: filepath.Join(dataDir, DrainFileName), drained: map[string][]string{}}
	atomicfile.Clean(s.path)
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read drain state %s: %w (fix its permissions or point [web] data_dir elsewhere)", s.path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("drain state %s is empty, which this proxy never writes; restore it, or delete it to start with no drained addresses", s.path)
	}
	var m map[string][]string
	err = json.Unmarshal(data, &m)
	if err == nil && m == nil {
		err = errors.New("it holds null, which this proxy never writes")
	}
	for srv, addrs := range m {
		if err == nil && addrs == nil {
			err = fmt.Errorf("server %q has null instead of a list of addresses", srv)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("drain state %s is corrupt (%v); it should look like {\"server\": [\"host:port\"]}: fix it, or delete it to start with no drained addresses", s.path, err)
	}
	for srv, addrs := range m {
		set := slices.Clone(addrs)
		slices.Sort(set)
		set = slices.Compact(set)
		if len(set) > 0 {
			s.drained[srv] = set
		}
	}
	return s, nil
}

// Path is the file the store persists to, for log lines and error messages.
func (s *DrainStore) Path() string { return s.path }

// Drained reports whether server/addr is recorded as drained.
func (s *DrainStore) Drained(server, addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := slices.BinarySearch(s.drained[server], addr)
	return ok
}

// Set records the drain intent for server/addr and returns once it is durable; on
// error the recorded state is unchanged. A no-op change does not write.
func (s *DrainStore) Set(server, addr string, drained bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.drained[server]
	i, present := slices.BinarySearch(cur, addr)
	if present == drained {
		return nil
	}
	next := maps.Clone(s.drained)
	if drained {
		next[server] = slices.Insert(slices.Clone(cur), i, addr)
	} else {
		rest := slices.Delete(slices.Clone(cur), i, i+1)
		if len(rest) == 0 {
			delete(next, server)
		} else {
			next[server] = rest
		}
	}
	if err := s.persist(next); err != nil {
		return err
	}
	s.drained = next
	return nil
}

// All returns a copy of the drained addresses per server.
func (s *DrainStore) All() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]string, len(s.drained))
	for k, v := range s.drained {
		out[k] = slices.Clone(v)
	}
	return out
}

// Replay applies the stored drains to a freshly started (or reloaded) runtime and
// forgets entries whose server or address is no longer configured, returning them as
// "server address" strings for a log line. Removing them from the file is best
// effort: if that write fails they are dropped again at the next start.
func (s *DrainStore) Replay(rt Runtime, now time.Time) (dropped []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := map[string][]string{}
	for _, srv := range slices.Sorted(maps.Keys(s.drained)) {
		for _, addr := range s.drained[srv] {
			err := rt.SetDrain(srv, addr, true, now)
			if errors.Is(err, ErrUnknownServer) || errors.Is(err, ErrUnknownAddress) {
				dropped = append(dropped, srv+" "+addr)
				continue
			}
			next[srv] = append(next[srv], addr)
		}
	}
	if len(dropped) > 0 {
		_ = s.persist(next)
		s.drained = next
	}
	return dropped
}

// persist writes m atomically (atomicfile.Write).
func (s *DrainStore) persist(m map[string][]string) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode drain state: %w", err)
	}
	if err := atomicfile.Write(s.path, append(data, '\n')); err != nil {
		return fmt.Errorf("save drain state: %w", err)
	}
	return nil
}

package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/infrarust-go/infrarust/internal/atomicfile"
)

// JournalFileName is the journal's file in the data dir.
const JournalFileName = "fleet.json"

// journalEntry is an Entry with whether the fleet has it yet.
type journalEntry struct {
	Entry
	// Pending is set for a change this proxy made (or learned while cut off)
	// that Redis has not acknowledged; it is pushed at every reconnect.
	Pending bool `json:"pending,omitempty"`
}

// journal is this proxy's copy of the shared operator state with versions: what
// decides, after a partition or a restart of anything, which change wins. The
// drain and ban stores hold what is applied; the journal holds why. It is
// written atomically (temp file, fsync, rename) like those stores.
type journal struct {
	path    string
	entries map[string]*journalEntry
}

// journalFile is the document on disk; the version lets a future format be
// detected instead of misread.
type journalFile struct {
	Version int             `json:"version"`
	Entries []*journalEntry `json:"entries"`
}

// openJournal reads path; a missing file is an empty journal, a corrupt one an
// error (the proxy must not forget which changes the fleet has not seen yet).
func openJournal(path string) (*journal, error) {
	j := &journal{path: path, entries: map[string]*journalEntry{}}
	if path == "" {
		return j, nil
	}
	atomicfile.Clean(path)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return j, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read fleet journal: %w", err)
	}
	var f journalFile
	if err := json.Unmarshal(data, &f); err != nil || f.Version != 1 {
		if err == nil {
			err = fmt.Errorf("unsupported version %d (this build reads version 1)", f.Version)
		}
		return nil, fmt.Errorf("fleet journal %s is corrupt (%v); move it aside to start from the fleet's state (changes this proxy made while Redis was unreachable would be lost)", path, err)
	}
	for i, e := range f.Entries {
		if e == nil {
			return nil, fmt.Errorf("fleet journal %s: entry %d is null; move the file aside to start from the fleet's state", path, i+1)
		}
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("fleet journal %s: entry %d: %v; move the file aside to start from the fleet's state", path, i+1, err)
		}
		j.entries[e.Field()] = e
	}
	return j, nil
}

func (j *journal) get(field string) (*journalEntry, bool) {
	e, ok := j.entries[field]
	return e, ok
}

func (j *journal) put(e Entry, pending bool) {
	j.entries[e.Field()] = &journalEntry{Entry: e, Pending: pending}
}

// pending lists the entries Redis has not acknowledged, oldest first.
func (j *journal) pending() []Entry {
	var out []Entry
	for _, e := range j.entries {
		if e.Pending {
			out = append(out, e.Entry)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return a.V.Compare(b.V) })
	return out
}

func (j *journal) countPending() int {
	n := 0
	for _, e := range j.entries {
		if e.Pending {
			n++
		}
	}
	return n
}

// save writes the journal atomically; on error the file is unchanged.
func (j *journal) save() error {
	if j.path == "" {
		return nil
	}
	list := make([]*journalEntry, 0, len(j.entries))
	for _, e := range j.entries {
		list = append(list, e)
	}
	slices.SortFunc(list, func(a, b *journalEntry) int { return strings.Compare(a.Field(), b.Field()) })
	data, err := json.MarshalIndent(journalFile{Version: 1, Entries: list}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode fleet journal: %w", err)
	}
	data = append(data, '\n')
	if err := atomicfile.Write(j.path, data); err != nil {
		return fmt.Errorf("save the fleet journal: %w", err)
	}
	return nil
}

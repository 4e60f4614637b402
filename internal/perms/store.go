package perms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/infrarust-go/infrarust/internal/atomicfile"
)

// Store keeps the stored permissions.
type Store interface {
	// Load reads the stored document.
	Load(ctx context.Context) (Doc, error)
	// Update makes a checked change and returns the document after it, and
	// whether it changed; the change is durable when it returns.
	Update(ctx context.Context, c Change) (Doc, bool, error)
	// Where says where the permissions are kept, for operators.
	Where() string
}

// FileName is the file store's name in the data dir.
const FileName = "permissions.json"

// legacyAdmins is the file of the admins made by `perms op` before groups:
// its entries become members of the admins group the first time the file
// store opens (the old file is then renamed *.imported).
const legacyAdmins = "admins.json"

// File is the Store of a proxy without a fleet: <data_dir>/permissions.json.
type File struct {
	mu   sync.Mutex
	path string
	doc  Doc
}

// OpenFile reads <dataDir>/permissions.json; missing is empty, corrupt is an
// error (permissions are never silently emptied).
func OpenFile(dataDir string) (*File, error) {
	if dataDir == "" {
		dataDir = "."
	}
	path := filepath.Join(dataDir, FileName)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs // named in the API and the CLI, which may run elsewhere
	}
	f := &File{path: path, doc: Doc{Groups: map[string]Group{}}}
	atomicfile.Clean(f.path)
	data, err := os.ReadFile(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, f.importLegacy(dataDir)
	case err != nil:
		return nil, fmt.Errorf("read the permissions %s: %w", f.path, err)
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &f.doc); err != nil {
		return nil, fmt.Errorf("permissions file %s is corrupt (%v): fix it, or move it away to keep only [permissions] of the config", f.path, err)
	}
	if f.doc.Groups == nil {
		f.doc.Groups = map[string]Group{}
	}
	return f, nil
}

// importLegacy moves admins.json's entries into the admins group. The import
// stays in memory when the data_dir is read-only (tried again at the next
// start): a leftover file never stops serve.
func (f *File) importLegacy(dataDir string) error {
	list, err := LegacyAdmins(dataDir)
	if err != nil || len(list) == 0 {
		return err
	}
	for _, e := range list {
		if c, err := (Change{Op: OpAdd, Group: Admins, Value: e}).Check(); err == nil {
			_, _ = f.doc.Apply(c)
		}
	}
	if f.save(f.doc) == nil {
		_ = MarkLegacyImported(dataDir)
	}
	return nil
}

// LegacyAdmins are the entries of <dataDir>/admins.json, the admins `perms
// op` stored before groups (none when there is no such file).
func LegacyAdmins(dataDir string) ([]string, error) {
	old := filepath.Join(dataDir, legacyAdmins)
	data, err := os.ReadFile(old)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the admins %s: %w", old, err)
	}
	var list []string
	if err := json.Unmarshal(bytes.TrimSpace(data), &list); err != nil {
		return nil, fmt.Errorf("admins file %s is corrupt; it should look like [\"Steve\"]: fix it, or delete it", old)
	}
	return list, nil
}

// MarkLegacyImported renames admins.json to admins.json.imported.
func MarkLegacyImported(dataDir string) error {
	old := filepath.Join(dataDir, legacyAdmins)
	return os.Rename(old, old+".imported")
}

func (f *File) save(d Doc) error {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(f.path, append(data, '\n')); err != nil {
		return fmt.Errorf("save the permissions: %w", err)
	}
	return nil
}

// Load returns the document.
func (f *File) Load(context.Context) (Doc, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.doc.Clone(), nil
}

// Update changes the document and saves it before returning.
func (f *File) Update(_ context.Context, c Change) (Doc, bool, error) {
	c, err := c.Check()
	if err != nil {
		return Doc{}, false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	next := f.doc.Clone()
	changed, err := next.Apply(c)
	if err != nil || !changed {
		return f.doc.Clone(), false, err
	}
	next.Version++
	if err := f.save(next); err != nil {
		return f.doc.Clone(), false, err
	}
	f.doc = next
	return next.Clone(), true, nil
}

// Where names the file.
func (f *File) Where() string { return f.path }

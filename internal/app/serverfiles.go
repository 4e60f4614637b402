package app

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/atomicfile"
	"github.com/infrarust-go/infrarust/internal/config"
)

// serverFiles writes servers_dir for the admin API (admin.ServerFiles): the
// file an operator would write, checked as `config check` checks it, then the
// servers reloaded as after an edit by hand.
type serverFiles struct {
	a  *App
	mu sync.Mutex // one write at a time: each checks against the others' result
}

// Write implements admin.ServerFiles.
func (f *serverFiles) Write(id string, keys map[string]any, create bool) (admin.ServerFile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.a.proxy.Config()
	path := filepath.Join(cur.ServersPath, id+".toml")
	old, readErr := os.ReadFile(path)
	exists := readErr == nil
	switch {
	case create && exists:
		return admin.ServerFile{}, admin.ErrServerExists
	case !create && !exists:
		if slices.ContainsFunc(cur.Servers, func(s *config.Server) bool { return s.ID == id }) {
			return admin.ServerFile{}, admin.ErrNotAFile
		}
		return admin.ServerFile{}, admin.ErrNoServerFile
	case create && slices.ContainsFunc(cur.Servers, func(s *config.Server) bool { return s.ID == id }):
		return admin.ServerFile{}, admin.ErrServerExists // built in, or discovered
	}
	// A server manager runs a command on this machine, or calls a panel, a
	// Docker endpoint or a cluster with credentials: the API key must not
	// grant that. Such a server is written by hand, and edited only so.
	if _, ok := keys["server_manager"]; ok {
		return admin.ServerFile{}, &admin.ServerFileError{Errors: []admin.FieldError{{Key: "server_manager",
			Message: "a server manager runs commands or calls other systems with credentials: write this server's file by hand, not through the API"}}}
	}
	if exists {
		if prev, err := config.ParseServer(old, path, cur); err == nil && prev.ServerManager != nil {
			return admin.ServerFile{}, &admin.ServerFileError{Errors: []admin.FieldError{{Key: "server_manager",
				Message: "this server has a server manager: edit its file by hand, not through the API"}}}
		}
	}
	data, err := toml.Marshal(tomlValues(keys))
	if err != nil {
		return admin.ServerFile{}, &admin.ServerFileError{Errors: []admin.FieldError{{Message: "not a server file: " + err.Error()}}}
	}
	s, err := config.ParseServer(data, path, cur)
	if err == nil {
		others := slices.DeleteFunc(slices.Clone(cur.Servers), func(o *config.Server) bool { return o.ID == id })
		err = config.CheckDomainConflicts(append(others, s))
	}
	if err != nil {
		return admin.ServerFile{}, fieldErrors(err)
	}
	if err := os.MkdirAll(cur.ServersPath, 0o755); err != nil {
		return admin.ServerFile{}, err
	}
	if err := atomicfile.Write(path, data); err != nil {
		return admin.ServerFile{}, err
	}
	if err := f.reload(id); err != nil {
		// The file stays as it was: the previous version back, or none.
		if exists {
			_ = atomicfile.Write(path, old)
		} else {
			_ = os.Remove(path)
		}
		_ = f.reload(id)
		return admin.ServerFile{}, err
	}
	return admin.ServerFile{ID: id, File: path, TOML: string(data)}, nil
}

// Delete implements admin.ServerFiles.
func (f *serverFiles) Delete(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.a.proxy.Config()
	path := filepath.Join(cur.ServersPath, id+".toml")
	if _, err := os.Stat(path); err != nil {
		if slices.ContainsFunc(cur.Servers, func(s *config.Server) bool { return s.ID == id }) {
			return admin.ErrNotAFile
		}
		return admin.ErrNoServerFile
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	return f.reload(id)
}

// reload applies servers_dir; only a rejected reload is an error here (another
// file's error leaves that file's previous version, as a reload by hand does).
func (f *serverFiles) reload(id string) error {
	f.a.reloadMu.Lock()
	defer f.a.reloadMu.Unlock()
	_, err := f.a.reloadServersLocked("admin API: server " + id)
	return err
}

// fieldErrors lists config check's errors by key.
func fieldErrors(err error) *admin.ServerFileError {
	var out admin.ServerFileError
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var ce *config.Error
		if errors.As(e, &ce) {
			// Some checks name their key in the message too; the field says it once.
			out.Errors = append(out.Errors, admin.FieldError{Key: ce.Key, Message: strings.TrimPrefix(ce.Msg, ce.Key+": ")})
			return
		}
		out.Errors = append(out.Errors, admin.FieldError{Message: e.Error()})
	}
	walk(err)
	return &out
}

// tomlValues turns JSON's numbers back into what a server file writes: whole
// numbers as integers (weights, counts), the rest as floats.
func tomlValues(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = tomlValues(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tomlValues(e)
		}
		return out
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
	}
	return v
}

var _ admin.ServerFiles = (*serverFiles)(nil)

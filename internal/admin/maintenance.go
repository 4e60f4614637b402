package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/infrarust-go/infrarust/internal/atomicfile"
)

// MaintenanceFileName is the maintenance store's file in the data dir.
const MaintenanceFileName = "maintenance.json"

// MaintenanceStore is the servers an operator put in maintenance, kept in
// <data_dir>/maintenance.json so a restart does not open a server the operator
// closed. A change is on disk before Set returns.
type MaintenanceStore struct {
	mu   sync.Mutex
	path string
	ids  []string // sorted
}

// OpenMaintenanceStore reads <dataDir>/maintenance.json; missing is empty, corrupt
// is an error (maintenance is never silently lifted).
func OpenMaintenanceStore(dataDir string) (*MaintenanceStore, error) {
	if dataDir == "" {
		dataDir = "."
	}
	s := &MaintenanceStore{path: filepath.Join(dataDir, MaintenanceFileName)}
	atomicfile.Clean(s.path)
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read maintenance state %s: %w", s.path, err)
	}
	var ids []string
	if err := json.Unmarshal(bytes.TrimSpace(data), &ids); err != nil || ids == nil {
		return nil, fmt.Errorf("maintenance state %s is corrupt; it should look like [\"server\"]: fix it, or delete it to take every server out of maintenance", s.path)
	}
	slices.Sort(ids)
	s.ids = slices.Compact(ids)
	return s, nil
}

// All lists the servers in maintenance.
func (s *MaintenanceStore) All() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ids)
}

// Set records server's maintenance and returns once it is durable.
func (s *MaintenanceStore) Set(server string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, present := slices.BinarySearch(s.ids, server)
	if present == on {
		return nil
	}
	next := slices.Clone(s.ids)
	if on {
		next = slices.Insert(next, i, server)
	} else {
		next = slices.Delete(next, i, i+1)
	}
	data, _ := json.Marshal(append([]string{}, next...))
	if err := atomicfile.Write(s.path, append(data, '\n')); err != nil {
		return fmt.Errorf("save maintenance state: %w", err)
	}
	s.ids = next
	return nil
}

// MaintenanceRequest is the body of POST /api/v1/servers/{id}/maintenance.
type MaintenanceRequest struct {
	On bool `json:"on"`
}

// handleMaintenance turns a server's maintenance on or off: stored first, then
// applied, so a restart keeps what the operator was told.
func (s *Server) handleMaintenance(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	req, err := decodeStrict[MaintenanceRequest](r.Body, false)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "body must be {\"on\": true|false}: "+err.Error())
		return
	}
	if _, err := s.opts.Runtime.Backends(id, s.now()); errors.Is(err, ErrUnknownServer) {
		s.writeRuntimeError(w, id, "", err)
		return
	}
	if st := s.opts.Maintenance; st != nil {
		if err := st.Set(id, req.On); err != nil {
			writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
			return
		}
	}
	if err := s.opts.Runtime.SetMaintenance(id, req.On); err != nil {
		s.writeRuntimeError(w, id, "", err)
		return
	}
	s.log.Info("admin action", "action", "server.maintenance", "server", id, "on", req.On, "client_ip", clientIP(r))
	s.shareMaintenance(r, id, req.On) // every proxy of a [fleet] applies it too
	s.handleServer(w, r)
}

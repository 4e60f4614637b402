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
	"strings"
	"sync"

	"github.com/infrarust-go/infrarust/internal/bans"
)

// AdminsFileName is the admins store's file in the data dir.
const AdminsFileName = "admins.json"

const adminsTempPattern = "." + AdminsFileName + ".tmp-*"

// AdminStore is the players made proxy admins at run time (`infrarust perms op`),
// kept in <data_dir>/admins.json beside [permissions] admins, which it adds to.
// An entry is a UUID (stored dashed, lower case) or a name (matched in any case).
type AdminStore struct {
	mu      sync.RWMutex
	dir     string
	path    string
	entries []string // sorted, normalised
}

// OpenAdminStore reads <dataDir>/admins.json; missing is empty, corrupt is an
// error (an admin list that cannot be read is never silently emptied).
func OpenAdminStore(dataDir string) (*AdminStore, error) {
	if dataDir == "" {
		dataDir = "."
	}
	s := &AdminStore{dir: dataDir, path: filepath.Join(dataDir, AdminsFileName)}
	removeTempFiles(dataDir, adminsTempPattern)
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the admins %s: %w", s.path, err)
	}
	var list []string
	if err := json.Unmarshal(bytes.TrimSpace(data), &list); err != nil || list == nil {
		return nil, fmt.Errorf("admins file %s is corrupt; it should look like [\"Steve\", \"069a79f4-44e9-4726-a5be-fca90e38aaf5\"]: fix it, or delete it to keep only [permissions] admins", s.path)
	}
	for _, e := range list {
		if n, err := NormalizeAdmin(e); err == nil {
			s.entries = append(s.entries, n)
		}
	}
	slices.Sort(s.entries)
	s.entries = slices.Compact(s.entries)
	return s, nil
}

// NormalizeAdmin checks an admin entry (a UUID or a player name) and returns its
// stored form.
func NormalizeAdmin(entry string) (string, error) {
	entry = strings.TrimSpace(entry)
	if id, ok := bans.CanonicalUUID(entry); ok {
		return id, nil
	}
	if bans.ValidUsername(entry) != nil {
		return "", errors.New("the entry is neither a UUID nor a player name (1 to 16 letters, digits or _)")
	}
	return strings.ToLower(entry), nil
}

// List returns the stored admins.
func (s *AdminStore) List() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.entries)
}

// Contains reports whether the player called name with uuid is a stored admin.
func (s *AdminStore) Contains(name, uuid string) bool {
	if s == nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, e := range s.entries {
		if e == uuid || strings.EqualFold(e, name) {
			return true
		}
	}
	return false
}

// Set adds (on) or removes an admin and returns once the change is durable;
// changed is false when there was nothing to do.
func (s *AdminStore) Set(entry string, on bool) (changed bool, err error) {
	n, err := NormalizeAdmin(entry)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, present := slices.BinarySearch(s.entries, n)
	if present == on {
		return false, nil
	}
	next := slices.Clone(s.entries)
	if on {
		next = slices.Insert(next, i, n)
	} else {
		next = slices.Delete(next, i, i+1)
	}
	data, _ := json.Marshal(append([]string{}, next...))
	if err := writeFileAtomic(s.dir, s.path, adminsTempPattern, append(data, '\n')); err != nil {
		return false, fmt.Errorf("save the admins: %w", err)
	}
	s.entries = next
	return true, nil
}

// AdminsView is the body of GET /api/v1/permissions/admins.
type AdminsView struct {
	// Configured are [permissions] admins (change them in the file).
	Configured []string `json:"configured"`
	// Stored are the admins added at run time (op/deop change them).
	Stored []string `json:"stored"`
	// TrustOfflineAdmins is [permissions] trust_offline_admins.
	TrustOfflineAdmins bool `json:"trust_offline_admins"`
}

// AdminRequest is the body of POST /api/v1/permissions/admins.
type AdminRequest struct {
	Player string `json:"player"`
}

func (s *Server) adminsView() AdminsView {
	v := AdminsView{Stored: []string{}, Configured: []string{}}
	if s.opts.Admins != nil {
		v.Stored = s.opts.Admins.List()
	}
	if s.opts.Config != nil {
		p := s.opts.Config().Permissions
		v.Configured = append(v.Configured, p.Admins...)
		v.TrustOfflineAdmins = p.TrustOfflineAdmins
	}
	return v
}

func (s *Server) handleAdmins(w http.ResponseWriter, r *http.Request) {
	writeData(w, http.StatusOK, s.adminsView())
}

// handleOp makes a player an admin (stored, effective at once for online players).
func (s *Server) handleOp(w http.ResponseWriter, r *http.Request) {
	req, err := decodeStrict[AdminRequest](r.Body, false)
	if err != nil || strings.TrimSpace(req.Player) == "" {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `body must be {"player": "<name or UUID>"}`)
		return
	}
	s.setAdmin(w, r, req.Player, true)
}

// handleDeop removes a stored admin; one in [permissions] admins stays (the API says so).
func (s *Server) handleDeop(w http.ResponseWriter, r *http.Request) {
	s.setAdmin(w, r, r.PathValue("player"), false)
}

func (s *Server) setAdmin(w http.ResponseWriter, r *http.Request, player string, on bool) {
	if s.opts.Admins == nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "this proxy keeps no admins store")
		return
	}
	changed, err := s.opts.Admins.Set(player, on)
	if err != nil {
		code, status := "BAD_REQUEST", http.StatusBadRequest
		if _, nerr := NormalizeAdmin(player); nerr == nil {
			code, status = "INTERNAL", http.StatusInternalServerError
		}
		writeError(w, status, code, err.Error())
		return
	}
	if !on && !changed && s.opts.Config != nil {
		n, _ := NormalizeAdmin(player)
		for _, c := range s.opts.Config().Permissions.Admins {
			if cn, err := NormalizeAdmin(c); err == nil && cn == n {
				writeError(w, http.StatusConflict, "CONFIGURED", player+" is an admin in [permissions] admins; remove them there and reload")
				return
			}
		}
	}
	action := "permissions.op"
	if !on {
		action = "permissions.deop"
	}
	s.log.Info("admin action", "action", action, "player", player, "changed", changed, "client_ip", clientIP(r))
	writeData(w, http.StatusOK, s.adminsView())
}

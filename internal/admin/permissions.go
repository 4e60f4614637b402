package admin

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/infrarust-go/infrarust/internal/perms"
)

// The roles of the in-game commands: GET /api/v1/permissions shows the groups
// of the file and the stored ones; the other routes change the stored ones
// (kept in <data_dir>/permissions.json, or with [fleet] in its Redis, shared).
// A change applies at once: the players it concerns get their command list
// again. /api/v1/permissions/admins is the admins group alone (`perms op`).

// GroupView is one group: what the file says and what is stored.
type GroupView struct {
	Name       string       `json:"name"`
	Configured *perms.Group `json:"configured,omitempty"`
	Stored     *perms.Group `json:"stored,omitempty"`
}

// PermissionsView is the body of GET /api/v1/permissions.
type PermissionsView struct {
	Groups []GroupView `json:"groups"`
	// Store says where stored changes are kept.
	Store string `json:"store"`
	// Version counts the stored changes.
	Version int64 `json:"version"`
	// StoreError says why the stored groups are not shown (Redis does not
	// answer); the proxy keeps those it last read in force.
	StoreError string `json:"store_error,omitempty"`
	// TrustOfflineAdmins is [permissions] trust_offline_admins: group members
	// are recognised on offline logins too.
	TrustOfflineAdmins bool `json:"trust_offline_admins"`
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

// AdminRequest is the body of POST /api/v1/permissions/admins and of a member's POST.
type AdminRequest struct {
	Player string `json:"player"`
}

// PermissionRequest is the body of a grant.
type PermissionRequest struct {
	Permission string `json:"permission"`
}

// GroupRequest is the body of PUT /api/v1/permissions/groups/{group}.
type GroupRequest struct {
	Servers []string `json:"servers"`
}

// configuredGroups are the file's groups, admins and the default's player
// commands included, as the proxy compiles them.
func (s *Server) configuredGroups() map[string]perms.Group {
	if s.opts.Config == nil {
		return map[string]perms.Group{}
	}
	return perms.FileGroups(s.opts.Config().Permissions)
}

func (s *Server) permissionsView(ctx context.Context) (PermissionsView, error) {
	v := PermissionsView{Groups: []GroupView{}}
	if s.opts.Config != nil {
		v.TrustOfflineAdmins = s.opts.Config().Permissions.TrustOfflineAdmins
	}
	file := s.configuredGroups()
	doc := perms.Doc{}
	if st := s.opts.Permissions; st != nil {
		var err error
		if doc, err = st.Load(ctx); err != nil && !isRefused(err) {
			doc, v.StoreError = perms.Doc{}, err.Error()
		}
		v.Store, v.Version = st.Where(), doc.Version
	}
	names := map[string]bool{}
	for n := range file {
		names[n] = true
	}
	for n := range doc.Groups {
		names[n] = true
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		gv := GroupView{Name: n}
		if g, ok := file[n]; ok {
			gv.Configured = &g
		}
		if g, ok := doc.Groups[n]; ok {
			gv.Stored = &g
		}
		v.Groups = append(v.Groups, gv)
	}
	return v, nil
}

func isRefused(err error) bool {
	var r *perms.RefusedError
	return errors.As(err, &r)
}

func (s *Server) handlePermissions(w http.ResponseWriter, r *http.Request) {
	v, err := s.permissionsView(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "the stored permissions cannot be read: "+err.Error())
		return
	}
	writeData(w, http.StatusOK, v)
}

func (s *Server) adminsView(ctx context.Context) AdminsView {
	v := AdminsView{Stored: []string{}, Configured: []string{}}
	if s.opts.Config != nil {
		p := s.opts.Config().Permissions
		v.Configured = append(v.Configured, p.Admins...)
		v.TrustOfflineAdmins = p.TrustOfflineAdmins
	}
	if st := s.opts.Permissions; st != nil {
		if doc, err := st.Load(ctx); err == nil || isRefused(err) {
			v.Stored = append(v.Stored, doc.Groups[perms.Admins].Members...)
		}
	}
	return v
}

func (s *Server) handleAdmins(w http.ResponseWriter, r *http.Request) {
	writeData(w, http.StatusOK, s.adminsView(r.Context()))
}

// handleOp makes a player an admin (stored, effective at once for online players).
func (s *Server) handleOp(w http.ResponseWriter, r *http.Request) {
	req, err := decodeStrict[AdminRequest](r.Body, false)
	if err != nil || strings.TrimSpace(req.Player) == "" {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `body must be {"player": "<name or UUID>"}`)
		return
	}
	if s.change(w, r, perms.Change{Op: perms.OpAdd, Group: perms.Admins, Value: req.Player}) {
		writeData(w, http.StatusOK, s.adminsView(r.Context()))
	}
}

// handleDeop removes a stored admin; one in [permissions] admins stays (the API says so).
func (s *Server) handleDeop(w http.ResponseWriter, r *http.Request) {
	if s.change(w, r, perms.Change{Op: perms.OpRemove, Group: perms.Admins, Value: r.PathValue("player")}) {
		writeData(w, http.StatusOK, s.adminsView(r.Context()))
	}
}

// handleGroupChange is every route that changes a stored group.
func (s *Server) handleGroupChange(op perms.Op) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := perms.Change{Op: op, Group: r.PathValue("group")}
		switch op {
		case perms.OpCreate:
			req, err := decodeStrict[GroupRequest](r.Body, true)
			if err != nil {
				writeError(w, http.StatusBadRequest, "BAD_REQUEST", `body must be {"servers": ["<server id>", ...]} or empty`)
				return
			}
			c.Servers = req.Servers
		case perms.OpGrant:
			req, err := decodeStrict[PermissionRequest](r.Body, false)
			if err != nil || req.Permission == "" {
				writeError(w, http.StatusBadRequest, "BAD_REQUEST", `body must be {"permission": "infrarust.command.<name>"}`)
				return
			}
			c.Value = req.Permission
		case perms.OpAdd:
			req, err := decodeStrict[AdminRequest](r.Body, false)
			if err != nil || req.Player == "" {
				writeError(w, http.StatusBadRequest, "BAD_REQUEST", `body must be {"player": "<name or UUID>"}`)
				return
			}
			c.Value = req.Player
		case perms.OpRevoke:
			c.Value = r.PathValue("permission")
		case perms.OpRemove:
			c.Value = r.PathValue("player")
		}
		if !s.change(w, r, c) {
			return
		}
		v, err := s.permissionsView(r.Context())
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", err.Error())
			return
		}
		writeData(w, http.StatusOK, v)
	}
}

// change makes c in the store and logs it; false when it answered an error.
func (s *Server) change(w http.ResponseWriter, r *http.Request, c perms.Change) bool {
	st := s.opts.Permissions
	if st == nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "this proxy keeps no permissions store")
		return false
	}
	checked, err := c.Check()
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
		return false
	}
	if _, inFile := s.configuredGroups()[checked.Group]; inFile && checked.Op == perms.OpCreate && len(checked.Servers) > 0 {
		writeError(w, http.StatusConflict, "CONFIGURED", "group "+checked.Group+" is in [permissions.groups] of the config file, whose servers it keeps; change them there and reload")
		return false
	}
	_, changed, err := st.Update(r.Context(), checked)
	switch {
	case errors.Is(err, perms.ErrNotStored):
		if s.inFile(checked) {
			what, where := checked.Value, "[permissions.groups."+checked.Group+"]"
			switch {
			case checked.Op == perms.OpDelete:
				what = "group " + checked.Group
			case checked.Group == perms.Admins && checked.Op == perms.OpRemove:
				where = "[permissions] admins"
			}
			writeError(w, http.StatusConflict, "CONFIGURED", what+" is in "+where+" of the config file; remove it there and reload")
		} else {
			writeError(w, http.StatusNotFound, "NOT_STORED", err.Error())
		}
		return false
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "the permissions were not changed: "+err.Error())
		return false
	}
	s.log.Info("admin action", "action", "permissions."+string(checked.Op), "group", checked.Group, "value", checked.Value,
		"changed", changed, "client_ip", clientIP(r))
	return true
}

// inFile reports whether what c removes is written in the config file.
func (s *Server) inFile(c perms.Change) bool {
	g, ok := s.configuredGroups()[c.Group]
	if !ok {
		return false
	}
	switch c.Op {
	case perms.OpRemove:
		return slices.ContainsFunc(g.Members, func(m string) bool {
			n, err := perms.NormalizeMember(m)
			return err == nil && n == c.Value
		})
	case perms.OpRevoke:
		return slices.Contains(g.Permissions, c.Value)
	case perms.OpDelete:
		return true
	}
	return false
}

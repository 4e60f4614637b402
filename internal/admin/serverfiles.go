package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// Servers created, edited and deleted through the API (the reference's
// POST /api/v1/servers, PUT and DELETE /api/v1/servers/{id}). What is written
// is the TOML file an operator would write in servers_dir, checked by exactly
// the checks of `infrarust config check`; a file that fails them is not
// written (an edited one keeps its previous version), and the answer lists
// each error with its key, for a form to show beside its field.

// ServerFiles writes servers_dir; the app implements it.
type ServerFiles interface {
	// Write checks server id's keys (the server file's, as JSON) and, when they
	// pass, writes <servers_dir>/<id>.toml and reloads the servers: create
	// (ErrServerExists when the file exists) or replace (ErrNoServerFile when
	// it does not). A *ServerFileError lists what failed.
	Write(id string, keys map[string]any, create bool) (ServerFile, error)
	// Delete removes <servers_dir>/<id>.toml and reloads the servers
	// (ErrNoServerFile; ErrNotAFile for a server that has no file there).
	Delete(id string) error
}

// ServerFile answers a create or an edit: where the file is and what it says.
type ServerFile struct {
	ID   string `json:"id"`
	File string `json:"file"`
	TOML string `json:"toml"`
}

// FieldError is one failed check of a server file: the key (as config check
// names it: "addresses[0]", "proxy_mode") and why.
type FieldError struct {
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}

// ServerFileError is a server file config check refused; nothing was written.
type ServerFileError struct{ Errors []FieldError }

func (e *ServerFileError) Error() string {
	var parts []string
	for _, f := range e.Errors {
		if f.Key != "" {
			parts = append(parts, f.Key+": "+f.Message)
		} else {
			parts = append(parts, f.Message)
		}
	}
	return strings.Join(parts, "; ")
}

// Errors of the server file routes.
var (
	ErrServerExists = errors.New("a server file of that id exists")
	ErrNoServerFile = errors.New("no server file of that id")
	ErrNotAFile     = errors.New("the server has no file in servers_dir")
)

// serverID is what an id may be: a file name that is the same on every system.
var serverID = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

func (s *Server) serverFiles(w http.ResponseWriter) (ServerFiles, bool) {
	if s.opts.ServerFiles == nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "this proxy cannot write server files (no servers_dir)")
		return nil, false
	}
	return s.opts.ServerFiles, true
}

// ServerWrite is the body of POST /api/v1/servers: the id and the server
// file's keys; PUT takes the keys alone.
type ServerWrite struct {
	ID   string         `json:"id"`
	Keys map[string]any `json:"server"`
}

func (s *Server) handleCreateServer(w http.ResponseWriter, r *http.Request) {
	sf, ok := s.serverFiles(w)
	if !ok {
		return
	}
	req, err := decodeStrict[ServerWrite](http.MaxBytesReader(w, r.Body, maxBodyBytes), false)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf(`body is not a server (%v); send {"id":"lobby","server":{"domains":["lobby.example.net"],"addresses":["10.0.0.5:25565"]}}`, err))
		return
	}
	s.writeServer(w, r, sf, req.ID, req.Keys, true)
}

func (s *Server) handleEditServer(w http.ResponseWriter, r *http.Request) {
	sf, ok := s.serverFiles(w)
	if !ok {
		return
	}
	var keys map[string]any
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err := dec.Decode(&keys); err != nil || dec.More() {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `body is not a server file's keys; send one object: {"domains":["lobby.example.net"],"addresses":["10.0.0.5:25565"]}`)
		return
	}
	s.writeServer(w, r, sf, r.PathValue("id"), keys, false)
}

func (s *Server) writeServer(w http.ResponseWriter, r *http.Request, sf ServerFiles, id string, keys map[string]any, create bool) {
	if !serverID.MatchString(id) {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf("server id %q: use 1 to 63 lower-case letters, digits, - and _, starting with a letter or digit (it names the file <id>.toml)", id))
		return
	}
	if len(keys) == 0 {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `give the server's keys: {"domains":[...],"addresses":[...]}`)
		return
	}
	action := "server.edit"
	if create {
		action = "server.create"
	}
	out, err := sf.Write(id, keys, create)
	if err != nil {
		s.log.Info("admin action failed", "action", action, "server", id, "client_ip", clientIP(r), "err", err)
		s.writeServerFileError(w, id, err)
		return
	}
	s.log.Info("admin action", "action", action, "server", id, "file", out.File, "client_ip", clientIP(r))
	status := http.StatusOK
	if create {
		status = http.StatusCreated
	}
	writeData(w, status, out)
}

func (s *Server) handleDeleteServer(w http.ResponseWriter, r *http.Request) {
	sf, ok := s.serverFiles(w)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if err := sf.Delete(id); err != nil {
		s.log.Info("admin action failed", "action", "server.delete", "server", id, "client_ip", clientIP(r), "err", err)
		s.writeServerFileError(w, id, err)
		return
	}
	s.log.Info("admin action", "action", "server.delete", "server", id, "client_ip", clientIP(r))
	writeData(w, http.StatusOK, map[string]string{"id": id, "deleted": "true"})
}

func (s *Server) writeServerFileError(w http.ResponseWriter, id string, err error) {
	var fe *ServerFileError
	switch {
	case errors.As(err, &fe):
		writeJSON(w, http.StatusUnprocessableEntity, struct {
			Error  ErrorBody    `json:"error"`
			Fields []FieldError `json:"fields"`
		}{ErrorBody{Code: "INVALID_SERVER", Message: fmt.Sprintf("server %s was not written: %v", id, fe)}, fe.Errors})
	case errors.Is(err, ErrServerExists):
		writeError(w, http.StatusConflict, "CONFLICT", fmt.Sprintf("server %s exists; edit it with PUT /api/v1/servers/%s", id, id))
	case errors.Is(err, ErrNoServerFile):
		writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("no server file %s.toml in servers_dir; create it with POST /api/v1/servers", id))
	case errors.Is(err, ErrNotAFile):
		writeError(w, http.StatusConflict, "CONFLICT", fmt.Sprintf("server %s has no file in servers_dir (it is built in, or found by Docker or Kubernetes discovery): change it where it comes from", id))
	default:
		s.log.Error("admin API: server file operation failed", "server", id, "err", err)
		writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
	}
}

package admin

import "net/http"

// ReloadResult is the body of POST /api/v1/reload.
type ReloadResult struct {
	// Changed are the keys of infrarust.toml now in force with a new value.
	Changed []string `json:"changed"`
	// Restart are the keys that changed in the file but only take effect at a
	// restart (their running values stay).
	Restart []string `json:"restart"`
	// Errors are the server files that were refused (each keeps its previous version).
	Errors []string `json:"errors"`
}

// KeyDiff is one key of `config check --diff`.
type KeyDiff struct {
	Key     string `json:"key"`
	Restart bool   `json:"restart"`
}

// handleReload reloads infrarust.toml and servers_dir, as SIGHUP does.
func (s *Server) handleReload(w http.ResponseWriter, r *http.Request) {
	if s.opts.Reload == nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "this proxy cannot reload")
		return
	}
	res, err := s.opts.Reload("admin API")
	s.log.Info("admin action", "action", "reload", "changed", len(res.Changed), "restart", len(res.Restart), "client_ip", clientIP(r))
	if err != nil && len(res.Errors) == 0 {
		writeError(w, http.StatusUnprocessableEntity, "RELOAD_REJECTED", "the running configuration stays in force: "+clip(err.Error()))
		return
	}
	writeData(w, http.StatusOK, res)
}

// handleFingerprint is the running configuration's keys with a digest of each
// value (never the value), for `config check --diff`.
func (s *Server) handleFingerprint(w http.ResponseWriter, r *http.Request) {
	if s.opts.Fingerprint == nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "this proxy does not describe its configuration")
		return
	}
	writeData(w, http.StatusOK, s.opts.Fingerprint())
}

package admin

import (
	"context"
	"net/http"
)

// routeReady is the readiness probe: open like /health (a kubelet or a container
// HEALTHCHECK has no key), but it fails until the proxy accepts players and again
// while it shuts down, so an orchestrator sends players elsewhere in both windows.
const routeReady = "GET /api/v1/ready"

// ReadyStatus is the body of a ready answer.
type ReadyStatus struct {
	Status string `json:"status"` // "ready"
}

// handleReady answers 200 {"data":{"status":"ready"}} or 503 NOT_READY with the reason.
func (s *Server) handleReady(w http.ResponseWriter, _ *http.Request) {
	if s.opts.Ready != nil {
		if err := s.opts.Ready(); err != nil {
			writeError(w, http.StatusServiceUnavailable, "NOT_READY", err.Error())
			return
		}
	}
	writeData(w, http.StatusOK, ReadyStatus{Status: "ready"})
}

// Ready asks whether the proxy takes players now; it needs no key. A proxy that
// is starting or shutting down answers an *APIError with Code "NOT_READY".
func (c *Client) Ready(ctx context.Context) error {
	var out ReadyStatus
	return c.do(ctx, http.MethodGet, "/api/v1/ready", nil, &out)
}

package admin

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"

	"github.com/infrarust-go/infrarust/internal/bans"
)

// Bot verification's passes (docs/offline-networks.md#bot-verification).

// ForgetResult is the answer of DELETE /api/v1/verify/passes/{who}.
type ForgetResult struct {
	Who string `json:"who"`
	// Forgotten counts the passes the store held (this proxy's memory, and with
	// [fleet] the fleet's Redis); the player is checked again at his next login.
	Forgotten int `json:"forgotten"`
}

func (s *Server) handleForgetVerified(w http.ResponseWriter, r *http.Request) {
	if s.opts.ForgetVerified == nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "this proxy keeps no verification passes")
		return
	}
	who := r.PathValue("who")
	if _, err := netip.ParseAddr(who); err != nil && bans.ValidUsername(who) != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", "give a player name or an IP address: /api/v1/verify/passes/{name|ip}")
		return
	}
	n, err := s.opts.ForgetVerified(r.Context(), who)
	if err != nil {
		s.log.Warn("admin action failed", "action", "verify.forget", "who", who, "client_ip", clientIP(r), "err", err)
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "the store of passes did not answer: "+err.Error())
		return
	}
	s.log.Info("admin action", "action", "verify.forget", "who", who, "forgotten", n, "client_ip", clientIP(r))
	writeData(w, http.StatusOK, ForgetResult{Who: who, Forgotten: n})
}

// ForgetVerified drops the verification passes of a player name (from any
// address) or an IP address (for any name).
func (c *Client) ForgetVerified(ctx context.Context, nameOrIP string) (ForgetResult, error) {
	var out ForgetResult
	err := c.do(ctx, http.MethodDelete, "/api/v1/verify/passes/"+url.PathEscape(nameOrIP), nil, &out)
	return out, err
}

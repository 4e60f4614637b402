package admin

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/accounts"
	"github.com/infrarust-go/infrarust/internal/bans"
)

// The auth limbo's accounts (docs/offline-networks.md): list, look up, reset a
// password, unregister. Hashes never leave the proxy.

// AccountView is one account as the API shows it.
type AccountView struct {
	Name         string    `json:"name"`
	RegisteredAt time.Time `json:"registered_at"`
	RegisteredIP string    `json:"registered_ip,omitempty"`
	LastLoginAt  time.Time `json:"last_login_at,omitzero"`
	LastLoginIP  string    `json:"last_login_ip,omitempty"`
}

func accountView(a accounts.Account) AccountView {
	return AccountView{Name: a.Name, RegisteredAt: a.RegisteredAt, RegisteredIP: a.RegisteredIP, LastLoginAt: a.LastLoginAt, LastLoginIP: a.LastLoginIP}
}

// PasswordRequest is the body of POST /api/v1/auth/accounts/{name}/password.
type PasswordRequest struct {
	Password string `json:"password"`
}

func (s *Server) accounts(w http.ResponseWriter) *accounts.Service {
	var svc *accounts.Service
	if s.opts.Accounts != nil {
		svc = s.opts.Accounts()
	}
	if svc == nil {
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", `no server uses the auth limbo (limbo_handlers = ["auth"]), so this proxy keeps no accounts`)
	}
	return svc
}

func accountError(w http.ResponseWriter, name string, err error) {
	switch {
	case errors.Is(err, accounts.ErrNotFound):
		writeError(w, http.StatusNotFound, "NOT_FOUND", name+" has no account")
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "the account store did not answer: "+err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
	}
}

func (s *Server) handleAccounts(w http.ResponseWriter, r *http.Request) {
	svc := s.accounts(w)
	if svc == nil {
		return
	}
	list, err := svc.Store.List(r.Context())
	if err != nil {
		accountError(w, "", err)
		return
	}
	out := make([]AccountView, 0, len(list))
	for _, a := range list {
		out = append(out, accountView(a))
	}
	writeData(w, http.StatusOK, out)
}

// account is the preamble of the per-account routes: the service, and {name}
// checked as a player name; nil when the answer is written already.
func (s *Server) account(w http.ResponseWriter, r *http.Request) (*accounts.Service, string) {
	svc := s.accounts(w)
	if svc == nil {
		return nil, ""
	}
	name := r.PathValue("name")
	if err := bans.ValidUsername(name); err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
		return nil, ""
	}
	return svc, name
}

func (s *Server) handleAccount(w http.ResponseWriter, r *http.Request) {
	svc, name := s.account(w, r)
	if svc == nil {
		return
	}
	a, err := svc.Store.Get(r.Context(), name)
	if err != nil {
		accountError(w, name, err)
		return
	}
	writeData(w, http.StatusOK, accountView(a))
}

func (s *Server) handleResetPassword(w http.ResponseWriter, r *http.Request) {
	svc, name := s.account(w, r)
	if svc == nil {
		return
	}
	req, err := decodeStrict[PasswordRequest](r.Body, false)
	if err != nil || req.Password == "" || strings.ContainsAny(req.Password, " \t\r\n") {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `body must be {"password": "<new password, no spaces>"}`)
		return
	}
	if err := svc.ResetPassword(r.Context(), name, req.Password); err != nil {
		if errors.Is(err, accounts.ErrNotFound) || errors.Is(err, context.DeadlineExceeded) {
			accountError(w, name, err)
		} else {
			writeError(w, http.StatusBadRequest, "BAD_REQUEST", err.Error())
		}
		return
	}
	s.log.Info("admin action", "action", "auth.reset_password", "player", name, "client_ip", clientIP(r))
	a, _ := svc.Store.Get(r.Context(), name)
	writeData(w, http.StatusOK, accountView(a))
}

func (s *Server) handleUnregister(w http.ResponseWriter, r *http.Request) {
	svc, name := s.account(w, r)
	if svc == nil {
		return
	}
	if err := svc.Store.Delete(r.Context(), name); err != nil {
		accountError(w, name, err)
		return
	}
	s.log.Info("admin action", "action", "auth.unregister", "player", name, "client_ip", clientIP(r))
	writeData(w, http.StatusOK, map[string]string{"unregistered": name})
}

// Accounts lists the auth limbo's accounts.
func (c *Client) Accounts(ctx context.Context) ([]AccountView, error) {
	var out []AccountView
	return out, c.do(ctx, http.MethodGet, "/api/v1/auth/accounts", nil, &out)
}

// Account looks one account up.
func (c *Client) Account(ctx context.Context, name string) (AccountView, error) {
	var out AccountView
	return out, c.do(ctx, http.MethodGet, "/api/v1/auth/accounts/"+url.PathEscape(name), nil, &out)
}

// ResetPassword sets an account's password and ends its remembered sessions.
func (c *Client) ResetPassword(ctx context.Context, name, password string) (AccountView, error) {
	var out AccountView
	return out, c.do(ctx, http.MethodPost, "/api/v1/auth/accounts/"+url.PathEscape(name)+"/password", PasswordRequest{Password: password}, &out)
}

// Unregister deletes an account.
func (c *Client) Unregister(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/auth/accounts/"+url.PathEscape(name), nil, nil)
}

package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// craftyProvider drives a server through Crafty Controller's API v2 (type
// "crafty", as in the Rust Infrarust): actions start_server, stop_server and
// kill_server, and the stats endpoint for its state.
type craftyProvider struct {
	panel
}

// craftyProviders is the ProviderFunc of type "crafty"; client talks to the panels.
func craftyProviders(client *http.Client) ProviderFunc {
	return func(_ string, sm *config.ServerManager, _ func()) (Provider, error) {
		p, err := newPanel("crafty", sm, client, "application/json",
			`type "crafty" needs api_key: an API token of a Crafty user allowed to start and stop the server, or "env:VAR"`)
		if err != nil {
			return nil, err
		}
		p.unreachable = " (its default certificate is self-signed: the proxy must trust it)"
		return &craftyProvider{panel: p}, nil
	}
}

// Start sends start_server.
func (p *craftyProvider) Start(ctx context.Context) error { return p.action(ctx, "start_server") }

// Stop sends stop_server, waits for Crafty to report the server down, and sends
// kill_server after grace.
func (p *craftyProvider) Stop(ctx context.Context, grace time.Duration) (string, error) {
	if err := p.action(ctx, "stop_server"); err != nil {
		return "", err
	}
	how := "stopped cleanly"
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(max(min(grace/10, time.Second), 10*time.Millisecond))
	defer tick.Stop()
	killed := false
	for {
		obs, err := p.Status(ctx)
		if err == nil && (obs.Phase == PhaseStopped || obs.Phase == PhaseCrashed) {
			return how, nil
		}
		select {
		case <-ctx.Done():
			return how, fmt.Errorf("Crafty still reports server %s running: %w", p.serverID, ctx.Err())
		case <-deadline.C:
			if killed {
				return how, fmt.Errorf("Crafty still reports server %s running %s after kill_server", p.serverID, grace)
			}
			if err := p.action(ctx, "kill_server"); err != nil {
				return how, err
			}
			killed, how = true, fmt.Sprintf("killed (kill_server) after shutdown_timeout %s", grace)
			deadline.Reset(grace)
		case <-tick.C:
		}
	}
}

// Status reads the server's stats: running, crashed, waiting_start.
func (p *craftyProvider) Status(ctx context.Context) (Observation, error) {
	var stats struct {
		Running      *bool `json:"running"`
		Crashed      bool  `json:"crashed"`
		WaitingStart bool  `json:"waiting_start"`
	}
	if err := p.do(ctx, http.MethodGet, "stats", &stats); err != nil {
		return Observation{}, err
	}
	switch {
	case stats.Running == nil:
		return Observation{}, fmt.Errorf("Crafty's stats for server %s have no \"running\" field; is url a Crafty Controller 4 (API v2)?", p.serverID)
	case *stats.Running:
		return Observation{Phase: PhaseRunning}, nil
	case stats.Crashed:
		return Observation{Phase: PhaseCrashed, Reason: "Crafty reports the server crashed (see its console in Crafty)"}, nil
	case stats.WaitingStart:
		return Observation{Phase: PhaseStarting}, nil
	}
	return Observation{Phase: PhaseStopped}, nil
}

func (p *craftyProvider) action(ctx context.Context, name string) error {
	return p.do(ctx, http.MethodPost, "action/"+name, nil)
}

// do calls /api/v2/servers/{id}/{path} and decodes the "data" of Crafty's
// {"status":"ok","data":...} envelope into out.
func (p *craftyProvider) do(ctx context.Context, method, path string, out any) error {
	u, code, data, err := p.call(ctx, method, "/api/v2/servers/", path, nil)
	if err != nil {
		return err
	}
	var env struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		Error     string          `json:"error"`
		ErrorData string          `json:"error_data"`
	}
	decoded := json.Unmarshal(data, &env) == nil
	if code/100 != 2 || (decoded && env.Status != "" && env.Status != "ok") {
		detail := ""
		if decoded && env.Error != "" {
			detail = ": " + env.Error
			if env.ErrorData != "" {
				detail += " (" + env.ErrorData + ")"
			}
		}
		hint := ""
		switch code {
		case http.StatusUnauthorized, http.StatusForbidden:
			hint = "; check api_key is the API token of a Crafty user with this server's start/stop permissions"
		case http.StatusNotFound:
			hint = "; check server_id is the server's id in Crafty and url points at Crafty"
		}
		return fmt.Errorf("Crafty %s %s: HTTP %d%s%s", method, u, code, detail, hint)
	}
	if out == nil {
		return nil
	}
	if !decoded || len(env.Data) == 0 {
		return fmt.Errorf("Crafty %s %s answered something that is not its JSON envelope", method, u)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("Crafty %s %s: unexpected data: %w", method, u, err)
	}
	return nil
}

package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// pteroProvider drives a server through a Pterodactyl (or Pelican) panel's client API.
type pteroProvider struct {
	panel
}

// pteroProviders is the ProviderFunc of type "pterodactyl"; client talks to the panels.
func pteroProviders(client *http.Client) ProviderFunc {
	return func(_ string, sm *config.ServerManager, _ func()) (Provider, error) {
		p, err := newPteroProvider(sm, client)
		if err != nil {
			return nil, err // never a typed nil inside the interface
		}
		return p, nil
	}
}

func newPteroProvider(sm *config.ServerManager, client *http.Client) (*pteroProvider, error) {
	p, err := newPanel("pterodactyl", sm, client, "Application/vnd.pterodactyl.v1+json",
		`type "pterodactyl" needs api_key: a client API key (ptlc_...) from the panel's account page, or "env:VAR"`)
	if err != nil {
		return nil, err
	}
	return &pteroProvider{panel: p}, nil
}

// resolveSecret reads "env:VAR" from the environment so keys stay out of config files.
func resolveSecret(v string) (string, error) {
	name, ok := strings.CutPrefix(v, "env:")
	if !ok {
		return v, nil
	}
	s := os.Getenv(name)
	if s == "" {
		return "", fmt.Errorf("api_key refers to environment variable %s, which is empty or unset", name)
	}
	return s, nil
}

// Start sends the "start" power signal.
func (p *pteroProvider) Start(ctx context.Context) error { return p.power(ctx, "start") }

// Stop sends "stop", waits for the panel to report offline, and sends "kill" after grace.
func (p *pteroProvider) Stop(ctx context.Context, grace time.Duration) (string, error) {
	if err := p.power(ctx, "stop"); err != nil {
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
			return how, fmt.Errorf("panel still reports server %s running: %w", p.serverID, ctx.Err())
		case <-deadline.C:
			if killed {
				return how, fmt.Errorf("panel still reports server %s running %s after the kill signal", p.serverID, grace)
			}
			if err := p.power(ctx, "kill"); err != nil {
				return how, err
			}
			killed, how = true, fmt.Sprintf("killed (panel kill signal) after shutdown_timeout %s", grace)
			deadline.Reset(grace)
		case <-tick.C:
		}
	}
}

// Status maps the panel's current_state.
func (p *pteroProvider) Status(ctx context.Context) (Observation, error) {
	var body struct {
		Attributes struct {
			CurrentState string `json:"current_state"`
		} `json:"attributes"`
	}
	if err := p.do(ctx, http.MethodGet, "resources", nil, &body); err != nil {
		return Observation{}, err
	}
	switch s := body.Attributes.CurrentState; s {
	case "running":
		return Observation{Phase: PhaseRunning}, nil
	case "starting":
		return Observation{Phase: PhaseStarting}, nil
	case "stopping":
		return Observation{Phase: PhaseStopping}, nil
	case "offline":
		return Observation{Phase: PhaseStopped}, nil
	default:
		return Observation{}, fmt.Errorf("panel reported unknown current_state %q for server %s", s, p.serverID)
	}
}

func (p *pteroProvider) power(ctx context.Context, signal string) error {
	body, _ := json.Marshal(map[string]string{"signal": signal})
	return p.do(ctx, http.MethodPost, "power", body, nil)
}

// do calls /api/client/servers/{id}/{path} and decodes a JSON answer into out.
func (p *pteroProvider) do(ctx context.Context, method, path string, body []byte, out any) error {
	u, code, data, err := p.call(ctx, method, "/api/client/servers/", path, body)
	if err != nil {
		return err
	}
	if code/100 != 2 {
		return panelError(method, u, code, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("panel %s %s answered something that is not its JSON: %w", method, u, err)
	}
	return nil
}

func panelError(method, u string, code int, data []byte) error {
	var pe struct {
		Errors []struct {
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	detail := ""
	if json.Unmarshal(data, &pe) == nil && len(pe.Errors) > 0 {
		detail = ": " + pe.Errors[0].Detail
	}
	hint := ""
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = "; check api_key is a client API key (ptlc_...) of a user allowed to control this server"
	case http.StatusNotFound:
		hint = "; check server_id is the server's short id from the panel URL and url points at the panel"
	case http.StatusConflict:
		hint = "; the panel is busy with this server (installing, transferring or suspended)"
	}
	return fmt.Errorf("panel %s %s: HTTP %d%s%s", method, u, code, detail, hint)
}

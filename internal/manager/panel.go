package manager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/infrarust-go/infrarust/internal/config"
)

// maxPanelAnswer bounds what is read of a panel's answer.
const maxPanelAnswer = 1 << 20

// panel is what the Pterodactyl and Crafty providers share: the panel's
// address and API key from [server_manager], and one bounded, authenticated
// call. Each provider reads its own JSON shapes and error texts.
type panel struct {
	kind     string // the [server_manager] type, for messages
	base     string // https://panel.example.com, no trailing slash
	serverID string
	key      string
	accept   string
	client   *http.Client
	// unreachable is added to the error when the panel cannot be reached.
	unreachable string
}

// newPanel checks url, server_id and api_key ("env:VAR" resolved); what names
// the key in the error when it is missing.
func newPanel(kind string, sm *config.ServerManager, client *http.Client, accept, keyHelp string) (panel, error) {
	if sm.URL == "" || sm.ServerID == "" {
		return panel{}, fmt.Errorf("type %q needs url (the panel's address) and server_id", kind)
	}
	u, err := url.Parse(sm.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return panel{}, fmt.Errorf("url %q is not an http(s) address like https://panel.example.com", sm.URL)
	}
	key, err := resolveSecret(sm.APIKey)
	if err != nil {
		return panel{}, err
	}
	if key == "" {
		return panel{}, errors.New(keyHelp)
	}
	return panel{kind: kind, base: strings.TrimRight(sm.URL, "/"), serverID: sm.ServerID, key: key, accept: accept, client: client}, nil
}

// call sends method to prefix/{server_id}/path (a POST always has a body, an
// empty one when body is nil) and returns the status and the answer.
func (p panel) call(ctx context.Context, method, prefix, path string, body []byte) (u string, code int, data []byte, err error) {
	u = p.base + prefix + url.PathEscape(p.serverID) + "/" + path
	var rd io.Reader
	if body != nil || method == http.MethodPost {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return u, 0, nil, fmt.Errorf("%s request %s %s: %w", p.kind, method, u, err)
	}
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Accept", p.accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return u, 0, nil, fmt.Errorf("%s at %s unreachable: %w%s", p.kind, p.base, err, p.unreachable)
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, maxPanelAnswer))
	if err != nil {
		return u, resp.StatusCode, nil, fmt.Errorf("%s %s %s: reading answer: %w", p.kind, method, u, err)
	}
	return u, resp.StatusCode, data, nil
}

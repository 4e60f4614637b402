package hookstest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/infrarust-go/infrarust/internal/webhook"
)

// Delivery is one request a WebhookServer received.
type Delivery struct {
	Event    string // X-Infrarust-Event
	ID       string // X-Infrarust-Delivery
	Body     []byte
	Envelope webhook.Envelope // Data decoded as a map
	Player   string           // data.username, or data.profile.name
	// Signed is true when X-Infrarust-Signature-256 verified under the server's secret.
	Signed bool
	Header http.Header
}

// WebhookServer is an operator's webhook endpoint on 127.0.0.1: it answers deciding
// requests by script (deny or redirect a player), and can be made to hang or fail.
type WebhookServer struct {
	*httptest.Server
	secret []byte

	mu         sync.Mutex
	deliveries []Delivery
	answers    map[string]webhook.Verdict // by player
	status     int                        // non-zero: answer this status to everything
	hang       chan struct{}              // non-nil: requests wait until it is closed
	arrived    chan struct{}              // closed and replaced on every delivery
}

// NewWebhookServer starts an endpoint checking signatures with secret ("" for none);
// it is closed when the test ends.
func NewWebhookServer(t testing.TB, secret string) *WebhookServer {
	t.Helper()
	s := &WebhookServer{secret: []byte(secret), answers: map[string]webhook.Verdict{}, arrived: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.Release()
		s.Server.Close()
	})
	return s
}

// Deny makes the server deny player with reason.
func (s *WebhookServer) Deny(player, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[player] = webhook.Verdict{Action: "deny", Reason: reason}
}

// Redirect makes the server send player to server.
func (s *WebhookServer) Redirect(player, server string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[player] = webhook.Verdict{Action: "redirect", Server: server}
}

// Answer makes the server answer player with v (any action, even one the event
// does not allow).
func (s *WebhookServer) Answer(player string, v webhook.Verdict) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[player] = v
}

// Fail makes every request get status (0 answers normally again).
func (s *WebhookServer) Fail(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// Hang makes every request wait, after it was recorded, until Release.
func (s *WebhookServer) Hang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hang == nil {
		s.hang = make(chan struct{})
	}
}

// Release lets hanging requests (and later ones) through.
func (s *WebhookServer) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hang != nil {
		close(s.hang)
		s.hang = nil
	}
}

// Deliveries returns the requests received so far.
func (s *WebhookServer) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.deliveries)
}

// Arrived returns a channel closed at the next delivery.
func (s *WebhookServer) Arrived() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.arrived
}

func (s *WebhookServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d := Delivery{Event: r.Header.Get(webhook.EventHeader), ID: r.Header.Get(webhook.DeliveryHeader), Body: body, Header: r.Header.Clone()}
	d.Signed = len(s.secret) > 0 && webhook.Verify(s.secret, body, r.Header.Get(webhook.SignatureHeader))
	var env struct {
		webhook.Envelope
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err == nil {
		d.Envelope = env.Envelope
		d.Envelope.Data = env.Data
		if name, ok := env.Data["username"].(string); ok {
			d.Player = name
		} else if p, ok := env.Data["profile"].(map[string]any); ok {
			d.Player, _ = p["name"].(string)
		}
	}
	s.mu.Lock()
	s.deliveries = append(s.deliveries, d)
	close(s.arrived)
	s.arrived = make(chan struct{})
	hang, status, answer := s.hang, s.status, s.answers[d.Player]
	s.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
			return
		}
	}
	if len(s.secret) > 0 && !d.Signed {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if status != 0 {
		http.Error(w, "scripted failure", status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if answer.Action == "" {
		answer.Action = "continue"
	}
	_ = json.NewEncoder(w).Encode(answer)
}

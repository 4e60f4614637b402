// Package authtest runs an in-process stand-in for Mojang's session server
// (and the two account endpoints a client calls before joining), so tests
// exercise client_only logins end to end without the internet.
//
// A test starts one with New, registers the players that may log in with
// AddAccount, and points both sides at Server.URL: the proxy through
// auth.SessionConfig{BaseURL: srv.URL} (or [auth] session_server), a Go test
// client through Server.ClientJoin, and node-minecraft-protocol 1.54's
// createClient with these options (all three server options take srv.URL):
//
//	{ username: acct.Name, auth: 'mojang', profilesFolder: false,
//	  session: { accessToken: acct.AccessToken, clientToken: 'test',
//	             selectedProfile: { id: acct.ID.Undashed(), name: acct.Name } },
//	  sessionServer: URL, authServer: URL, servicesServer: URL }
//
// nmp then validates the token (POST {URL}/validate), fetches a chat-signing
// key pair (POST {URL}/player/certificates; 1.19-1.19.2 clients send it in
// Login Start; add disableChatSigning: true to skip it) and joins
// (POST {URL}/session/minecraft/join) before answering the Encryption Request.
//
//	srv := authtest.New(t)
//	acct := srv.AddAccount("Alice")
//	// the client joins: POST {URL}/session/minecraft/join
//	// the proxy verifies: GET {URL}/session/minecraft/hasJoined?username=Alice&serverId=...
//	srv.SetMode(authtest.Unavailable) // hasJoined now answers 503
//
// Like the real servers, join and validate answer 204 to a valid access token
// and 403 otherwise, and hasJoined answers 200 with the profile (a signed
// "textures" property included) only for a matching join, 204 otherwise.
// SetMode makes hasJoined fail on purpose; the counters and HasJoinedQueries
// let a test check what the proxy asked.
package authtest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
)

// Paths the stand-in serves below its base URL besides auth.HasJoinedPath.
const (
	// JoinPath is where clients announce a join (session server).
	JoinPath = "/session/minecraft/join"
	// ValidatePath is where clients check their access token (auth server).
	ValidatePath = "/validate"
	// CertificatesPath is where clients fetch their chat-signing key (services API).
	CertificatesPath = "/player/certificates"
)

// Mode selects how hasJoined answers, so a test can make authentication fail on purpose.
type Mode int

const (
	// Normal answers from the recorded joins, as Mojang does.
	Normal Mode = iota
	// Unavailable answers 503 Service Unavailable.
	Unavailable
	// Hang never answers until the client gives up (or the server closes).
	Hang
	// Garbage answers 200 with a body that is not JSON.
	Garbage
)

// Account is a player the stand-in knows: what a real client holds after logging in to Mojang.
type Account struct {
	// Name is the profile name hasJoined reports.
	Name string
	// ID is the profile UUID; clients send it undashed as selectedProfile.
	ID auth.UUID
	// AccessToken is the secret the client presents on join.
	AccessToken string
}

type joinRecord struct {
	serverID string
	ip       string
}

// Server is the running stand-in; its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to configure as the session server (no trailing slash).
	URL string

	ts       *httptest.Server
	signKey  *rsa.PrivateKey
	stop     chan struct{}
	stopOnce sync.Once

	joinCalls      atomic.Int64
	hasJoinedCalls atomic.Int64

	mu       sync.Mutex
	mode     Mode
	byToken  map[string]*Account
	byName   map[string]*Account // lower-case name
	keys     map[auth.UUID]*PlayerKey
	joins    map[string]joinRecord
	queries  []url.Values
	joinErrs []string
	arrived  chan struct{} // closed and replaced whenever a hasJoined request arrives
}

// New starts a stand-in on 127.0.0.1 and closes it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start is New for programs that are not tests (benchmark tools): the caller
// must Close the server.
func Start() (*Server, error) {
	key, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		return nil, fmt.Errorf("authtest: signing key: %w", err)
	}
	s := &Server{
		signKey: key,
		stop:    make(chan struct{}),
		byToken: map[string]*Account{},
		byName:  map[string]*Account{},
		joins:   map[string]joinRecord{},
		keys:    map[auth.UUID]*PlayerKey{},
		arrived: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+JoinPath, s.handleJoin)
	mux.HandleFunc("POST "+ValidatePath, s.handleValidate)
	mux.HandleFunc("POST "+CertificatesPath, s.handleCertificates)
	mux.HandleFunc("GET "+auth.HasJoinedPath, s.handleHasJoined)
	s.ts = httptest.NewServer(mux)
	s.URL = s.ts.URL
	return s, nil
}

// Close releases hanging requests and stops the server; safe to call twice.
func (s *Server) Close() {
	s.stopOnce.Do(func() {
		close(s.stop)
		s.ts.Close()
	})
}

// AddAccount registers a player with a random UUID and access token.
func (s *Server) AddAccount(name string) Account {
	var id auth.UUID
	_, _ = rand.Read(id[:])
	id[6] = id[6]&0x0f | 0x40 // version 4, as Mojang's ids
	id[8] = id[8]&0x3f | 0x80
	return s.AddAccountWithID(name, id)
}

// AddAccountWithID registers a player with a chosen UUID, for tests that assert on it.
func (s *Server) AddAccountWithID(name string, id auth.UUID) Account {
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	a := &Account{Name: name, ID: id, AccessToken: hex.EncodeToString(tok[:])}
	s.mu.Lock()
	s.byToken[a.AccessToken] = a
	s.byName[strings.ToLower(name)] = a
	s.mu.Unlock()
	return *a
}

// SetMode changes how hasJoined answers from now on; join is unaffected.
func (s *Server) SetMode(m Mode) {
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
}

// JoinCalls counts join requests, accepted or not.
func (s *Server) JoinCalls() int { return int(s.joinCalls.Load()) }

// HasJoinedCalls counts hasJoined requests in every mode.
func (s *Server) HasJoinedCalls() int { return int(s.hasJoinedCalls.Load()) }

// maxQueries bounds the recorded hasJoined queries.
const maxQueries = 4096

// HasJoinedQueries returns the query of every hasJoined request so far, in
// order (only the most recent few thousand in a long run).
func (s *Server) HasJoinedQueries() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]url.Values, len(s.queries))
	copy(out, s.queries)
	return out
}

// AwaitHasJoined blocks until at least n hasJoined requests have arrived (in
// any mode) or ctx ends, so a test can act while the proxy waits on a Hang.
func (s *Server) AwaitHasJoined(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, ch := s.HasJoinedCalls(), s.arrived
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("authtest: %d of %d hasJoined requests arrived: %w", got, n, ctx.Err())
		}
	}
}

// RejectedJoins describes every join that was refused, to explain a failing test.
func (s *Server) RejectedJoins() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.joinErrs...)
}

// SigningKey is the public key the textures signatures verify with (SHA1withRSA),
// standing in for Mojang's Yggdrasil key.
func (s *Server) SigningKey() *rsa.PublicKey { return &s.signKey.PublicKey }

// Profile is what hasJoined answers for a registered name, for a test to
// compare with what the proxy forwarded. The textures property is rebuilt on
// every call but is deterministic for the account.
func (s *Server) Profile(name string) (auth.Profile, bool) {
	s.mu.Lock()
	a, ok := s.byName[strings.ToLower(name)]
	s.mu.Unlock()
	if !ok {
		return auth.Profile{}, false
	}
	return s.profileFor(*a), true
}

// ClientJoin plays a client's join call over HTTP for Go test clients:
// serverHash is auth.ServerIDHash of the proxy's Encryption Request.
func (s *Server) ClientJoin(acct Account, serverHash string) error {
	body, _ := json.Marshal(map[string]string{
		"accessToken":     acct.AccessToken,
		"selectedProfile": acct.ID.Undashed(),
		"serverId":        serverHash,
	})
	resp, err := s.ts.Client().Post(s.URL+JoinPath, "application/json", strings.NewReader(string(body)))
	if err != nil {
		return fmt.Errorf("authtest: join: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("authtest: join refused: HTTP %d %s", resp.StatusCode, msg)
	}
	return nil
}

// joinRequest is the body clients POST to join: node-minecraft-protocol (via
// the yggdrasil package) and vanilla's authlib both send these three fields.
// selectedProfile is a UUID string; a {id, name} object is tolerated too.
type joinRequest struct {
	AccessToken     string          `json:"accessToken"`
	SelectedProfile json.RawMessage `json:"selectedProfile"`
	ServerID        string          `json:"serverId"`
}

func (s *Server) handleJoin(w http.ResponseWriter, r *http.Request) {
	s.joinCalls.Add(1)
	var req joinRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		s.refuse(w, http.StatusBadRequest, "IllegalArgumentException", "body is not JSON: "+err.Error())
		return
	}
	profileID, err := selectedProfileID(req.SelectedProfile)
	if err != nil {
		s.refuse(w, http.StatusBadRequest, "IllegalArgumentException", err.Error())
		return
	}
	s.mu.Lock()
	a, ok := s.byToken[req.AccessToken]
	s.mu.Unlock()
	if !ok {
		s.refuse(w, http.StatusForbidden, "ForbiddenOperationException", "Invalid token.")
		return
	}
	if a.ID != profileID {
		s.refuse(w, http.StatusForbidden, "ForbiddenOperationException", "Invalid profile for this token.")
		return
	}
	if req.ServerID == "" {
		s.refuse(w, http.StatusBadRequest, "IllegalArgumentException", "serverId is empty")
		return
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	s.mu.Lock()
	s.joins[strings.ToLower(a.Name)] = joinRecord{serverID: req.ServerID, ip: host}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func selectedProfileID(raw json.RawMessage) (auth.UUID, error) {
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		return auth.ParseUUID(str)
	}
	var obj struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return auth.UUID{}, fmt.Errorf("selectedProfile is neither a UUID string nor a profile: %s", raw)
	}
	return auth.ParseUUID(obj.ID)
}

func (s *Server) refuse(w http.ResponseWriter, status int, kind, msg string) {
	s.mu.Lock()
	s.joinErrs = append(s.joinErrs, fmt.Sprintf("%d %s: %s", status, kind, msg))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": kind, "errorMessage": msg})
}

func (s *Server) handleHasJoined(w http.ResponseWriter, r *http.Request) {
	s.hasJoinedCalls.Add(1)
	q := r.URL.Query()
	s.mu.Lock()
	if len(s.queries) >= maxQueries { // a long benchmark keeps only the recent ones
		s.queries = append(s.queries[:0], s.queries[maxQueries/2:]...)
	}
	s.queries = append(s.queries, q)
	mode := s.mode
	close(s.arrived)
	s.arrived = make(chan struct{})
	s.mu.Unlock()

	switch mode {
	case Unavailable:
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	case Hang:
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	case Garbage:
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
		return
	}

	name := strings.ToLower(q.Get("username"))
	s.mu.Lock()
	j, joined := s.joins[name]
	a, known := s.byName[name]
	s.mu.Unlock()
	if !joined || !known || j.serverID != q.Get("serverId") {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if ip := q.Get("ip"); ip != "" && ip != j.ip {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	p := s.profileFor(*a)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id":         p.ID.Undashed(),
		"name":       p.Name,
		"properties": p.Properties,
	})
}

// profileFor builds the profile with a textures property signed like Mojang's:
// base64 JSON value, base64 SHA1withRSA signature of the value's text.
func (s *Server) profileFor(a Account) auth.Profile {
	tex, _ := json.Marshal(map[string]any{
		"timestamp":   time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(),
		"profileId":   a.ID.Undashed(),
		"profileName": a.Name,
		"textures": map[string]any{
			"SKIN": map[string]string{"url": "http://textures.minecraft.net/texture/" + a.ID.Undashed()},
		},
	})
	value := base64.StdEncoding.EncodeToString(tex)
	sig, _ := s.sign([]byte(value)) // cannot fail with the server's own valid key
	return auth.Profile{
		ID:   a.ID,
		Name: a.Name,
		Properties: []auth.Property{{
			Name:      "textures",
			Value:     value,
			Signature: base64.StdEncoding.EncodeToString(sig),
		}},
	}
}

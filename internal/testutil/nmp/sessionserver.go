package nmp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// maxSessionBody bounds a join request body (a real one is about 200 bytes).
const maxSessionBody = 16 << 10

// SessionServer stands in for Mojang's session server (sessionserver.mojang.com) so
// online-mode logins run without any account: a client posts a join with a token this
// server handed out, and a server (nmp, or the proxy) asks hasJoined with the same
// server-id hash. Point both sides at URL.
type SessionServer struct {
	// URL is the base URL (http://127.0.0.1:port), without a trailing slash.
	URL string

	mu       sync.Mutex
	profiles map[string]Profile // by access token
	joined   map[string]string  // username -> server-id hash of its last accepted join
	calls    []SessionCall
}

// Profile is a game profile as the session server returns it.
type Profile struct {
	// ID is the UUID as 32 hex digits (no dashes), as Mojang writes it.
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Properties []ProfileProperty `json:"properties"`
}

// ProfileProperty is one signed profile property (skins); the stand-in sends none.
type ProfileProperty struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Signature string `json:"signature,omitempty"`
}

// SessionCall records one request, so a test can prove which side asked what.
type SessionCall struct {
	// Kind is "join", "hasJoined" or "lookup" (the profile API).
	Kind string
	// Username is the profile name (join: the token's profile, if the token was known).
	Username string
	// ServerID is the server-id hash the caller sent.
	ServerID string
	// IP is hasJoined's optional ip parameter.
	IP string
	// OK says whether the call succeeded (join accepted / hasJoined returned a profile).
	OK bool
}

// StartSessionServer runs a stand-in session server on 127.0.0.1 until the test ends.
func StartSessionServer(t testing.TB) *SessionServer {
	t.Helper()
	s := &SessionServer{profiles: map[string]Profile{}, joined: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /session/minecraft/join", s.join)
	mux.HandleFunc("GET /session/minecraft/hasJoined", s.hasJoined)
	mux.HandleFunc("GET /users/profiles/minecraft/{name}", s.lookup)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// AddProfile creates a profile with a random UUID and returns the access token that
// may join as it.
func (s *SessionServer) AddProfile(name string) (token string, p Profile) {
	p = Profile{ID: randomUUID(), Name: name, Properties: []ProfileProperty{}}
	token = randomHex(24)
	s.mu.Lock()
	s.profiles[token] = p
	s.mu.Unlock()
	return token, p
}

// Calls returns every request so far, oldest first.
func (s *SessionServer) Calls() []SessionCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SessionCall(nil), s.calls...)
}

func (s *SessionServer) join(w http.ResponseWriter, r *http.Request) {
	var req struct {
		AccessToken     string `json:"accessToken"`
		SelectedProfile string `json:"selectedProfile"`
		ServerID        string `json:"serverId"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSessionBody)).Decode(&req); err != nil {
		sessionError(w, http.StatusBadRequest, "IllegalArgumentException", "malformed join request: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.profiles[req.AccessToken]
	call := SessionCall{Kind: "join", Username: p.Name, ServerID: req.ServerID}
	if !ok || p.ID != req.SelectedProfile || req.ServerID == "" {
		s.calls = append(s.calls, call)
		sessionError(w, http.StatusForbidden, "ForbiddenOperationException", "Invalid token.")
		return
	}
	s.joined[p.Name] = req.ServerID
	call.OK = true
	s.calls = append(s.calls, call)
	w.WriteHeader(http.StatusNoContent)
}

func (s *SessionServer) hasJoined(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name, serverID := q.Get("username"), q.Get("serverId")
	s.mu.Lock()
	defer s.mu.Unlock()
	call := SessionCall{Kind: "hasJoined", Username: name, ServerID: serverID, IP: q.Get("ip")}
	var profile Profile
	if want, ok := s.joined[name]; ok && want == serverID {
		for _, p := range s.profiles {
			if p.Name == name {
				profile, call.OK = p, true
				break
			}
		}
	}
	s.calls = append(s.calls, call)
	if !call.OK {
		// Mojang answers an unverified player with an empty 204.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(profile)
}

// lookup is the profile API's name lookup (api.mojang.com): a name with a
// profile is a paid account; Mojang answers any other with 204.
func (s *SessionServer) lookup(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, SessionCall{Kind: "lookup", Username: name})
	for _, p := range s.profiles {
		if strings.EqualFold(p.Name, name) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"id": p.ID, "name": p.Name})
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func sessionError(w http.ResponseWriter, status int, kind, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": kind, "errorMessage": message})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// randomUUID is a version-4 UUID as 32 hex digits.
func randomUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b)
}

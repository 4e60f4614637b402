package admin

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Who may do what, and the browser's sessions.
//
// A request is the admin's (the API key) or a viewer's (a key of [web]
// viewer_keys): a viewer reads every route and changes nothing. A browser
// signs in once with either key (POST /api/v1/session) and is then known by
// a session cookie (HttpOnly, SameSite=Strict, Secure behind TLS); a change
// made with the cookie must also carry the session's CSRF token in
// X-CSRF-Token. Failed sign-ins spend the same guess budget as wrong keys.

type role uint8

const (
	roleNone role = iota
	roleViewer
	roleAdmin
)

func (r role) String() string {
	switch r {
	case roleAdmin:
		return "admin"
	case roleViewer:
		return "viewer"
	}
	return "none"
}

const (
	sessionCookie = "infrarust_session"
	csrfHeader    = "X-CSRF-Token"
	// sessionTTL is how long a sign-in lasts; then the key is asked again.
	sessionTTL = 12 * time.Hour
	// maxSessions bounds the sessions kept; the oldest goes first.
	maxSessions = 1024
)

type session struct {
	role    role
	csrf    string
	expires time.Time
}

// sessions are the browsers signed in, by the SHA-256 of their cookie (the
// cookie itself is never kept).
type sessions struct {
	mu sync.Mutex
	m  map[[32]byte]session
}

func (ss *sessions) add(r role, now time.Time) (cookie string, s session) {
	var raw, csrf [32]byte
	_, _ = rand.Read(raw[:])
	_, _ = rand.Read(csrf[:])
	cookie = hex.EncodeToString(raw[:])
	s = session{role: r, csrf: hex.EncodeToString(csrf[:]), expires: now.Add(sessionTTL)}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.m == nil {
		ss.m = map[[32]byte]session{}
	}
	for k, v := range ss.m {
		if !now.Before(v.expires) {
			delete(ss.m, k)
		}
	}
	if len(ss.m) >= maxSessions {
		var oldest [32]byte
		var at time.Time
		for k, v := range ss.m {
			if at.IsZero() || v.expires.Before(at) {
				oldest, at = k, v.expires
			}
		}
		delete(ss.m, oldest)
	}
	ss.m[sha256.Sum256([]byte(cookie))] = s
	return cookie, s
}

func (ss *sessions) get(cookie string, now time.Time) (session, bool) {
	if cookie == "" {
		return session{}, false
	}
	k := sha256.Sum256([]byte(cookie))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.m[k]
	if ok && !now.Before(s.expires) {
		delete(ss.m, k)
		return session{}, false
	}
	return s, ok
}

func (ss *sessions) remove(cookie string) {
	k := sha256.Sum256([]byte(cookie))
	ss.mu.Lock()
	delete(ss.m, k)
	ss.mu.Unlock()
}

// keyRole is the role a presented key gives, compared in constant time.
func (s *Server) keyRole(key string) role {
	if key == "" {
		return roleNone
	}
	sum := sha256.Sum256([]byte(key))
	if subtle.ConstantTimeCompare(sum[:], s.keyHash[:]) == 1 {
		return roleAdmin
	}
	got := roleNone
	for _, h := range s.viewerHashes {
		if subtle.ConstantTimeCompare(sum[:], h[:]) == 1 {
			got = roleViewer
		}
	}
	return got
}

// access is who r is, and whether it came by the session cookie (a change
// made that way needs the CSRF token).
func (s *Server) access(r *http.Request, allowQuery bool) (role, *session) {
	var key string
	if h := r.Header.Get("Authorization"); len(h) > len(bearerPrefix) && strings.EqualFold(h[:len(bearerPrefix)], bearerPrefix) {
		key = strings.TrimSpace(h[len(bearerPrefix):])
	} else if allowQuery {
		key = r.URL.Query().Get("token")
	}
	if key != "" {
		return s.keyRole(key), nil
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		if sess, ok := s.sessions.get(c.Value, s.now()); ok {
			return sess.role, &sess
		}
	}
	return roleNone, nil
}

// reads reports a request that changes nothing.
func reads(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

// SessionInfo answers the session routes: who is signed in, and the token a
// change made with the cookie must carry in X-CSRF-Token.
type SessionInfo struct {
	Role    string    `json:"role"`
	CSRF    string    `json:"csrf"`
	Expires time.Time `json:"expires"`
}

// SignIn is the body of POST /api/v1/session.
type SignIn struct {
	Key string `json:"key"`
}

func (s *Server) handleSignIn(w http.ResponseWriter, r *http.Request) {
	ip, now := clientIP(r), s.now()
	key := limiterKey(ip)
	if locked, wait := s.limits.lockedOut(key, now); locked {
		writeRateLimited(w, wait, fmt.Sprintf("too many wrong keys from %s", ip), "check the key: [web] api_key, a [web] viewer_keys entry, or <data_dir>/admin.key")
		return
	}
	req, err := decodeStrict[SignIn](r.Body, false)
	if err != nil {
		writeError(w, http.StatusBadRequest, "BAD_REQUEST", `send the key: {"key":"..."}`)
		return
	}
	rl := s.keyRole(strings.TrimSpace(req.Key))
	if rl == roleNone {
		s.limits.failed(key, now)
		s.log.Info("admin sign-in refused", "client_ip", ip)
		writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "wrong key: use [web] api_key (or <data_dir>/admin.key), or a [web] viewer_keys entry")
		return
	}
	cookie, sess := s.sessions.add(rl, now)
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: cookie, Path: "/", Expires: sess.expires, MaxAge: int(sessionTTL.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r),
	})
	s.log.Info("admin sign-in", "role", rl.String(), "client_ip", ip)
	writeData(w, http.StatusOK, SessionInfo{Role: rl.String(), CSRF: sess.csrf, Expires: sess.expires})
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "no session: sign in with POST /api/v1/session")
		return
	}
	sess, ok := s.sessions.get(c.Value, s.now())
	if !ok {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "the session ended: sign in again")
		return
	}
	writeData(w, http.StatusOK, SessionInfo{Role: sess.role.String(), CSRF: sess.csrf, Expires: sess.expires})
}

func (s *Server) handleSignOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.sessions.remove(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r)})
	writeData(w, http.StatusOK, map[string]bool{"signed_out": true})
}

// overTLS reports that the browser reached the API over TLS (itself, or a
// proxy in front that says so): the cookie is then sent over TLS only.
func overTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

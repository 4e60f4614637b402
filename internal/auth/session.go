package auth

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultSessionServer is Mojang's session server, the base URL when [auth] session_server is unset.
const DefaultSessionServer = "https://sessionserver.mojang.com"

// DefaultTimeout bounds one hasJoined call when the caller sets none, as vanilla's 5 s.
const DefaultTimeout = 5 * time.Second

// MaxResponseBytes bounds a hasJoined answer: a profile with textures is a few
// KiB, so anything larger is garbage and is never read into memory whole.
const MaxResponseBytes = 64 << 10

// HasJoinedPath is where the session server answers hasJoined, below the base URL.
const HasJoinedPath = "/session/minecraft/hasJoined"

// Vanilla's kick texts for a failed authentication, so players see what a
// vanilla server would have shown them.
const (
	// KickFailedVerify is shown when the session server does not vouch for the player.
	KickFailedVerify = "Failed to verify username!"
	// KickServersDown is shown when the session server cannot be asked.
	KickServersDown = "Authentication servers are down. Please try again later, sorry!"
)

var (
	// ErrNotJoined means the session server answered and did not confirm the
	// login: the player never joined with this hash (wrong shared secret,
	// cracked client, another proxy) or the answer names someone else.
	ErrNotJoined = errors.New("auth: the session server did not confirm this player's login")
	// ErrUnavailable means the session server could not give an answer: it is
	// unreachable, slower than the timeout, answered with an error status or
	// with something that is not a profile.
	ErrUnavailable = errors.New("auth: the session server is unavailable")
)

// KickMessage maps an authentication error to vanilla's kick text: servers
// down for ErrUnavailable, "Failed to verify username!" for anything else.
func KickMessage(err error) string {
	if errors.Is(err, ErrUnavailable) {
		return KickServersDown
	}
	return KickFailedVerify
}

// SessionConfig configures a SessionClient; the zero value talks to Mojang with a 5 s timeout.
type SessionConfig struct {
	// BaseURL is the session server (scheme and host, optional path prefix); empty means DefaultSessionServer.
	BaseURL string
	// Timeout bounds each HasJoined call; zero means DefaultTimeout.
	Timeout time.Duration
	// HTTPClient sends the requests; nil means a client over http.DefaultTransport (honours HTTPS_PROXY).
	HTTPClient *http.Client
	// Dial, when set and HTTPClient is not, connects to the session server
	// (or the HTTPS proxy) instead of Go's net: the proxy's raw sockets. With
	// no proxy from the environment, each call then runs on the caller's own
	// goroutine (directTransport) instead of through net/http's Transport.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// TLSConfig is the TLS of an https session server reached through Dial;
	// nil means the system's roots.
	TLSConfig *tls.Config
	// UserAgent is sent with every request; empty means "infrarust".
	UserAgent string
}

// SessionClient asks a session server whether a player really joined; safe for concurrent use.
type SessionClient struct {
	endpoint  string
	timeout   time.Duration
	hc        *http.Client
	own       idleCloser // made for Dial; Close ends its connections
	userAgent string
}

// NewSessionClient checks the configuration once, so a bad URL is a startup
// error rather than a kick for every player.
func NewSessionClient(cfg SessionConfig) (*SessionClient, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultSessionServer
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("auth: session server %q is not a URL: %w; set [auth] session_server to e.g. %s", base, err, DefaultSessionServer)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("auth: session server %q needs an http:// or https:// scheme and a host; set [auth] session_server to e.g. %s", base, DefaultSessionServer)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("auth: session server %q must not have a query or fragment", base)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("auth: session server timeout %v is negative", cfg.Timeout)
	}
	c := &SessionClient{
		endpoint:  strings.TrimSuffix(u.String(), "/") + HasJoinedPath,
		timeout:   cfg.Timeout,
		hc:        cfg.HTTPClient,
		userAgent: cfg.UserAgent,
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	switch {
	case c.hc != nil:
	case cfg.Dial != nil:
		var rt http.RoundTripper
		if proxy, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err == nil && proxy == nil {
			port := u.Port()
			switch {
			case port != "":
			case u.Scheme == "https":
				port = "443"
			default:
				port = "80"
			}
			d := newDirectTransport(cfg.Dial, u.Hostname(), port, u.Scheme == "https", cfg.TLSConfig)
			c.own, rt = d, d
		} else {
			t := sessionTransport.Clone()
			t.DialContext = cfg.Dial
			t.TLSClientConfig = cfg.TLSConfig
			c.own, rt = t, t
		}
		ownTransports.Store(c.own, nil)
		c.hc = &http.Client{Transport: rt}
	default:
		c.hc = &http.Client{Transport: sessionTransport}
	}
	if c.userAgent == "" {
		c.userAgent = "infrarust"
	}
	return c, nil
}

// LoginBurst is how many connections to the session server stay open between
// logins: as many as logins that commonly run at once.
const LoginBurst = 64

// sessionTransport keeps LoginBurst idle connections to the session server.
// http.DefaultTransport keeps two per host, so every concurrent login past the
// second dialled anew, and against Mojang shook hands over TLS anew.
var sessionTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = LoginBurst
	return t
}()

// ownTransports are the session clients' own transports (SessionConfig.Dial)
// until their Close.
var ownTransports sync.Map

// idleCloser is a transport whose kept connections can be closed.
type idleCloser interface{ CloseIdleConnections() }

// CloseIdleConnections closes the connections to the session server kept
// between logins, every client's (an in-process measurement counts sessions only).
func CloseIdleConnections() {
	sessionTransport.CloseIdleConnections()
	ownTransports.Range(func(t, _ any) bool {
		t.(idleCloser).CloseIdleConnections()
		return true
	})
}

// Close closes the connections a client with its own Dial keeps between logins.
func (c *SessionClient) Close() {
	if c.own != nil {
		if d, ok := c.own.(*directTransport); ok {
			d.close()
		} else {
			c.own.CloseIdleConnections()
		}
		ownTransports.Delete(c.own)
	}
}

// Timeout is the bound applied to each HasJoined call.
func (c *SessionClient) Timeout() time.Duration { return c.timeout }

// HasJoined asks the session server whether username joined with serverHash
// (see ServerIDHash) and returns the authenticated profile. clientIP is sent
// as the ip parameter only when it is valid (vanilla's prevent-proxy-connections);
// pass netip.Addr{} to leave it out. Errors wrap ErrNotJoined or ErrUnavailable,
// except when ctx is canceled (the player left): that error wraps only ctx.Err().
func (c *SessionClient) HasJoined(ctx context.Context, username, serverHash string, clientIP netip.Addr) (Profile, error) {
	q := url.Values{}
	q.Set("username", username)
	q.Set("serverId", serverHash)
	if clientIP.IsValid() {
		q.Set("ip", clientIP.Unmap().WithZone("").String())
	}
	tctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errSessionTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodGet, c.endpoint+"?"+q.Encode(), nil)
	if err != nil {
		return Profile{}, fmt.Errorf("%w: build request: %v", ErrUnavailable, err)
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return Profile{}, c.transportError(ctx, tctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return Profile{}, c.transportError(ctx, tctx, err)
	}
	if len(body) > MaxResponseBytes {
		return Profile{}, fmt.Errorf("%w: hasJoined answer is over %d bytes", ErrUnavailable, MaxResponseBytes)
	}
	return ParseHasJoined(resp.StatusCode, body, username)
}

var errSessionTimeout = errors.New("session server timeout")

// transportError tells a caller's own cancellation (the player left) apart
// from our timeout and from network failures.
func (c *SessionClient) transportError(parent, tctx context.Context, err error) error {
	switch {
	case errors.Is(parent.Err(), context.Canceled):
		return fmt.Errorf("auth: hasJoined abandoned: %w", parent.Err())
	case parent.Err() != nil:
		// The caller's own deadline (a login budget) ran out first: the
		// session server was still too slow, so the player hears it is down.
		return fmt.Errorf("%w: no answer before the login deadline: %w", ErrUnavailable, parent.Err())
	case errors.Is(context.Cause(tctx), errSessionTimeout):
		return fmt.Errorf("%w: no answer within %v", ErrUnavailable, c.timeout)
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// hasJoinedAnswer is the JSON shape of a positive hasJoined answer.
type hasJoinedAnswer struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Properties []Property `json:"properties"`
}

// ParseHasJoined interprets one hasJoined answer (status and body) for the
// player who asked as username. It is HasJoined without the HTTP, kept
// separate so the decision table is tested and fuzzed on its own:
// 204 or an empty body is ErrNotJoined; other non-200 statuses and bodies
// that are not a profile with a valid UUID are ErrUnavailable; a profile for
// another name is ErrNotJoined.
func ParseHasJoined(status int, body []byte, username string) (Profile, error) {
	switch {
	case status == http.StatusNoContent:
		return Profile{}, fmt.Errorf("%w (HTTP 204)", ErrNotJoined)
	case status != http.StatusOK:
		return Profile{}, fmt.Errorf("%w: HTTP %d", ErrUnavailable, status)
	case len(strings.TrimSpace(string(body))) == 0:
		return Profile{}, fmt.Errorf("%w (empty answer)", ErrNotJoined)
	}
	var a hasJoinedAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return Profile{}, fmt.Errorf("%w: answer is not a profile: %v", ErrUnavailable, err)
	}
	id, err := ParseUUID(a.ID)
	if err != nil {
		return Profile{}, fmt.Errorf("%w: answer has no valid id: %v", ErrUnavailable, err)
	}
	if a.Name == "" {
		return Profile{}, fmt.Errorf("%w: answer has no name", ErrUnavailable)
	}
	if !strings.EqualFold(a.Name, username) {
		return Profile{}, fmt.Errorf("%w: answer is for %q, not %q", ErrNotJoined, a.Name, username)
	}
	for i, p := range a.Properties {
		if p.Name == "" {
			return Profile{}, fmt.Errorf("%w: property %d has no name", ErrUnavailable, i)
		}
	}
	return Profile{ID: id, Name: a.Name, Properties: a.Properties}, nil
}

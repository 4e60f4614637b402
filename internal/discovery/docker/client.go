package docker

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// The Engine API is plain JSON over HTTP, and the proxy needs five calls of it, so
// the client is ours (net/http) rather than the Docker SDK, which would add its
// dependency tree to a binary whose size operators notice. Paths carry no API
// version: the daemon then answers in its own current version, so a daemon that
// dropped old versions (Engine 29 refuses < 1.44) still works; only fields that
// every version since 1.24 has are read.

// ErrNotFound marks a container the daemon does not know.
var ErrNotFound = errors.New("no such container")

// Bounds on what one answer may cost; a daemon is trusted, a socket proxy or a
// wrong endpoint may not be.
const (
	maxListBytes    = 32 << 20
	maxInspectBytes = 4 << 20
	maxEventBytes   = 1 << 20
	requestTimeout  = 15 * time.Second
)

// Client talks to one Docker Engine API endpoint; label discovery and the docker
// server manager share it.
type Client struct {
	base     string // http://docker (unix socket) or http(s)://host:port
	endpoint string // as configured, for messages
	hc       *http.Client
}

// NewClient dials conn.Endpoint: a unix socket, tcp:// (HTTPS when TLS files are
// given), http:// or https://.
func NewClient(conn config.Docker) (*Client, error) {
	if err := config.CheckDockerEndpoint(conn.Endpoint); err != nil {
		return nil, err
	}
	u, _ := url.Parse(conn.Endpoint)
	tr := &http.Transport{
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	c := &Client{endpoint: conn.Endpoint, hc: &http.Client{Transport: tr}}
	tlsOn := u.Scheme == "https" || conn.TLSCA != "" || conn.TLSCert != ""
	switch u.Scheme {
	case "unix":
		path := u.Path
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}
		c.base = "http://docker"
		tlsOn = false
	default:
		scheme := "http"
		if tlsOn {
			scheme = "https"
		}
		c.base = scheme + "://" + u.Host
	}
	if tlsOn {
		cfg, err := tlsConfig(conn)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = cfg
	}
	return c, nil
}

// tlsConfig loads the CA and the client certificate of a TLS daemon.
func tlsConfig(conn config.Docker) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if conn.TLSCA != "" {
		pem, err := os.ReadFile(conn.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("docker tls_ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("docker tls_ca %s holds no PEM certificate", conn.TLSCA)
		}
		cfg.RootCAs = pool
	}
	if conn.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(conn.TLSCert, conn.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("docker tls_cert/tls_key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Endpoint is the configured endpoint, for messages.
func (c *Client) Endpoint() string { return c.endpoint }

// Container is one entry of GET /containers/json.
type Container struct {
	ID              string            `json:"Id"`
	Names           []string          `json:"Names"`
	Labels          map[string]string `json:"Labels"`
	State           string            `json:"State"`
	Ports           []Port            `json:"Ports"`
	NetworkSettings struct {
		Networks map[string]Network `json:"Networks"`
	} `json:"NetworkSettings"`
}

// Name is the container's name without the leading slash.
func (c Container) Name() string {
	for _, n := range c.Names {
		n = strings.TrimPrefix(n, "/")
		if n != "" && !strings.Contains(n, "/") { // "/other/alias" are legacy links
			return n
		}
	}
	if len(c.ID) > 12 {
		return c.ID[:12]
	}
	return c.ID
}

// Network is a container's attachment to one Docker network.
type Network struct {
	IPAddress         string `json:"IPAddress"`
	GlobalIPv6Address string `json:"GlobalIPv6Address"`
}

// Port is one exposed or published port of a container.
type Port struct {
	IP          string `json:"IP"`
	PrivatePort int    `json:"PrivatePort"`
	PublicPort  int    `json:"PublicPort"`
	Type        string `json:"Type"`
}

// ContainerState is the State of GET /containers/{id}/json.
type ContainerState struct {
	Status     string `json:"Status"` // created, running, paused, restarting, removing, exited, dead
	Running    bool   `json:"Running"`
	Paused     bool   `json:"Paused"`
	Restarting bool   `json:"Restarting"`
	OOMKilled  bool   `json:"OOMKilled"`
	ExitCode   int    `json:"ExitCode"`
	Error      string `json:"Error"`
	Health     *struct {
		Status string `json:"Status"` // starting, healthy, unhealthy
	} `json:"Health"`
}

// Inspection is the part of GET /containers/{id}/json the proxy reads.
type Inspection struct {
	ID    string         `json:"Id"`
	Name  string         `json:"Name"`
	State ContainerState `json:"State"`
}

// Event is one line of GET /events.
type Event struct {
	Type   string `json:"Type"`
	Action string `json:"Action"`
	Actor  struct {
		ID         string            `json:"ID"`
		Attributes map[string]string `json:"Attributes"`
	} `json:"Actor"`
}

// Filters is the Engine API's filter argument: key -> accepted values.
type Filters map[string][]string

func (f Filters) query() string {
	if len(f) == 0 {
		return ""
	}
	b, _ := json.Marshal(map[string][]string(f))
	return url.QueryEscape(string(b))
}

// Ping checks that the endpoint is a Docker daemon.
func (c *Client) Ping(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/_ping", nil, 1<<10)
}

// Containers lists containers (running ones only unless all) that match filters.
func (c *Client) Containers(ctx context.Context, filters Filters, all bool) ([]Container, error) {
	q := "/containers/json?all=" + strconv.FormatBool(all)
	if f := filters.query(); f != "" {
		q += "&filters=" + f
	}
	var out []Container
	return out, c.call(ctx, http.MethodGet, q, &out, maxListBytes)
}

// Inspect reads one container's state; ErrNotFound when it does not exist.
func (c *Client) Inspect(ctx context.Context, id string) (Inspection, error) {
	var out Inspection
	return out, c.call(ctx, http.MethodGet, "/containers/"+url.PathEscape(id)+"/json", &out, maxInspectBytes)
}

// Start starts a container; one already running is not an error.
func (c *Client) Start(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/start", nil, 64<<10)
}

// Unpause resumes a paused container.
func (c *Client) Unpause(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/unpause", nil, 64<<10)
}

// Stop asks the daemon to stop a container: SIGTERM (or its StopSignal), then
// SIGKILL after grace. It returns when the container is down; one already stopped
// is not an error.
func (c *Client) Stop(ctx context.Context, id string, grace time.Duration) error {
	secs := int((grace + time.Second - 1) / time.Second)
	ctx, cancel := context.WithTimeout(ctx, grace+requestTimeout)
	defer cancel()
	return c.call(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/stop?t="+strconv.Itoa(secs), nil, 64<<10)
}

// call sends one request and decodes a JSON answer into out (nil: discard it).
// 304 (already started or stopped) counts as success.
func (c *Client) call(ctx context.Context, method, path string, out any, limit int64) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	resp, err := c.do(ctx, method, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("docker %s %s: reading the answer: %w", method, trimQuery(path), err)
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("docker %s %s: the answer is larger than %d bytes; is %s a Docker daemon?", method, trimQuery(path), limit, c.endpoint)
	}
	if resp.StatusCode == http.StatusNotModified {
		return nil
	}
	if resp.StatusCode/100 != 2 {
		return c.apiError(method, path, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("docker %s %s answered something that is not the Engine API's JSON (%v); is %s a Docker daemon?", method, trimQuery(path), err, c.endpoint)
	}
	return nil
}

func (c *Client) do(ctx context.Context, method, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("docker request %s %s: %w", method, trimQuery(path), err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is noise here; the endpoint is named below
		}
		return nil, fmt.Errorf("docker daemon at %s unreachable: %w (is the socket mounted and readable by the proxy's user?)", c.endpoint, err)
	}
	return resp, nil
}

func (c *Client) apiError(method, path string, code int, data []byte) error {
	var body struct {
		Message string `json:"message"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &body) == nil && body.Message != "" {
		msg = body.Message
	}
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	err := fmt.Errorf("docker %s %s: HTTP %d: %s", method, trimQuery(path), code, msg)
	switch code {
	case http.StatusNotFound:
		return fmt.Errorf("%w (%w)", ErrNotFound, err)
	case http.StatusForbidden, http.StatusUnauthorized:
		return fmt.Errorf("%w; a socket proxy in front of the daemon must allow this call", err)
	}
	return err
}

func trimQuery(path string) string {
	p, _, _ := strings.Cut(path, "?")
	return p
}

// EventStream is an open GET /events; Next blocks until the next event.
type EventStream struct {
	body io.ReadCloser
	r    *bufio.Reader
}

// Events opens the event stream with filters; it ends when ctx ends, the daemon
// goes away, or Close is called.
func (c *Client) Events(ctx context.Context, filters Filters) (*EventStream, error) {
	q := "/events"
	if f := filters.query(); f != "" {
		q += "?filters=" + f
	}
	resp, err := c.do(ctx, http.MethodGet, q)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, c.apiError(http.MethodGet, q, resp.StatusCode, data)
	}
	return &EventStream{body: resp.Body, r: bufio.NewReaderSize(resp.Body, 16<<10)}, nil
}

// Next reads one event. Lines are bounded; a line that is not an event is an error
// (the stream is then unusable and should be reopened).
func (s *EventStream) Next() (Event, error) {
	for {
		line, err := readLine(s.r, maxEventBytes)
		if err != nil {
			return Event{}, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var ev Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return Event{}, fmt.Errorf("docker event stream: a line that is not an event: %w", err)
		}
		return ev, nil
	}
}

// Close ends the stream.
func (s *EventStream) Close() error { return s.body.Close() }

// readLine reads up to '\n' without holding more than max bytes.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, fmt.Errorf("docker event stream: an event longer than %d bytes", max)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

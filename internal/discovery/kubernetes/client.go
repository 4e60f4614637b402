package kubernetes

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
	"strings"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// Why not client-go: the proxy reads two kinds of object (Services and
// EndpointSlices) and writes one (a workload's scale). client-go with its
// informers adds tens of MB to a binary everyone downloads, Kubernetes or not (see
// docs/kubernetes.md for the measurement), so this is a small REST client with the
// informer's discipline instead: list, then watch from the list's resourceVersion
// (bookmarks on), relist on 410 Gone, back off on errors. No polling.

// In-cluster locations of the service account, as every pod has them.
const (
	saDir          = "/var/run/secrets/kubernetes.io/serviceaccount"
	tokenRereadAge = time.Minute // bound tokens rotate; kubelet refreshes the file
	maxObjectBytes = 64 << 20    // one LIST answer
	maxEventBytes  = 8 << 20     // one watch event
	requestTimeout = 30 * time.Second
)

// ErrGone is the API server's 410: the resourceVersion is too old, relist.
var ErrGone = errors.New("resource version too old (410 Gone)")

// Client talks to the Kubernetes API server; discovery and the kubernetes server
// manager share it.
type Client struct {
	base      string
	hc        *http.Client
	tokenFile string
	namespace string // the pod's own namespace (or "default")

	mu      sync.Mutex
	token   string
	tokenAt time.Time
	now     func() time.Time
}

// NewClient builds a client from [kubernetes]: in-cluster when api_server is
// empty (KUBERNETES_SERVICE_HOST/PORT and the service account files).
func NewClient(k config.Kubernetes) (*Client, error) {
	c := &Client{tokenFile: k.TokenFile, now: time.Now}
	ca := k.CAFile
	if k.APIServer == "" {
		host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
		if host == "" || port == "" {
			return nil, errors.New("not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset): set [kubernetes] api_server, token_file and ca_file")
		}
		c.base = "https://" + net.JoinHostPort(host, port)
		if c.tokenFile == "" {
			c.tokenFile = saDir + "/token"
		}
		if ca == "" {
			ca = saDir + "/ca.crt"
		}
	} else {
		c.base = strings.TrimRight(k.APIServer, "/")
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("kubernetes CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("kubernetes CA %s holds no PEM certificate", ca)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	c.hc = &http.Client{Transport: tr}
	c.namespace = "default"
	if b, err := os.ReadFile(saDir + "/namespace"); err == nil && strings.TrimSpace(string(b)) != "" {
		c.namespace = strings.TrimSpace(string(b))
	}
	if c.tokenFile != "" {
		if _, err := c.bearer(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Namespace is the proxy's own namespace, where "" in the config points.
func (c *Client) Namespace() string { return c.namespace }

// bearer returns the token, re-read from its file once a minute (projected
// service account tokens rotate).
func (c *Client) bearer() (string, error) {
	if c.tokenFile == "" {
		return "", nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && c.now().Sub(c.tokenAt) < tokenRereadAge {
		return c.token, nil
	}
	b, err := os.ReadFile(c.tokenFile)
	if err != nil {
		if c.token != "" {
			return c.token, nil // keep the last one; the next read may work
		}
		return "", fmt.Errorf("kubernetes token: %w", err)
	}
	c.token, c.tokenAt = strings.TrimSpace(string(b)), c.now()
	return c.token, nil
}

// Status is the API server's error object.
type Status struct {
	Message string `json:"message"`
	Reason  string `json:"reason"`
	Code    int    `json:"code"`
}

func (c *Client) request(ctx context.Context, method, path string, body []byte, contentType string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("kubernetes request %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	tok, err := c.bearer()
	if err != nil {
		return nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is noise here; the server is named below
		}
		return nil, fmt.Errorf("kubernetes API server %s unreachable (%s %s): %w", c.base, method, trimQuery(path), err)
	}
	return resp, nil
}

// call sends one request and decodes the JSON answer into out.
func (c *Client) call(ctx context.Context, method, path string, body []byte, contentType string, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	resp, err := c.request(ctx, method, path, body, contentType)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxObjectBytes+1))
	if err != nil {
		return fmt.Errorf("kubernetes %s %s: reading the answer: %w", method, trimQuery(path), err)
	}
	if len(data) > maxObjectBytes {
		return fmt.Errorf("kubernetes %s %s: the answer is larger than %d MiB; narrow [kubernetes] namespace or label_selector", method, trimQuery(path), maxObjectBytes>>20)
	}
	if resp.StatusCode/100 != 2 {
		return apiError(method, path, resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("kubernetes %s %s: not the API's JSON: %w", method, trimQuery(path), err)
	}
	return nil
}

func apiError(method, path string, code int, data []byte) error {
	var st Status
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &st) == nil && st.Message != "" {
		msg = st.Message
	}
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	err := fmt.Errorf("kubernetes %s %s: HTTP %d: %s", method, trimQuery(path), code, msg)
	switch code {
	case http.StatusGone:
		return fmt.Errorf("%w: %w", ErrGone, err)
	case http.StatusForbidden:
		return fmt.Errorf("%w (the proxy's service account lacks this right: apply deploy/kubernetes/rbac.yaml or the Helm chart's Role)", err)
	case http.StatusUnauthorized:
		return fmt.Errorf("%w (the token was refused: check [kubernetes] token_file)", err)
	}
	return err
}

func trimQuery(p string) string {
	p, _, _ = strings.Cut(p, "?")
	return p
}

// Get reads one object.
func (c *Client) Get(ctx context.Context, path string, out any) error {
	return c.call(ctx, http.MethodGet, path, nil, "", out)
}

// MergePatch applies a JSON merge patch.
func (c *Client) MergePatch(ctx context.Context, path string, patch any, out any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodPatch, path, b, "application/merge-patch+json", out)
}

// WatchEvent is one line of a watch.
type WatchEvent struct {
	Type   string          `json:"type"` // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
	Object json.RawMessage `json:"object"`
}

// watch opens a watch on path (a collection URL with its query); the caller reads
// events until it ends. The server ends it after timeoutSeconds.
func (c *Client) watch(ctx context.Context, path string) (io.ReadCloser, *bufio.Reader, error) {
	resp, err := c.request(ctx, http.MethodGet, path, nil, "")
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, nil, apiError(http.MethodGet, path, resp.StatusCode, data)
	}
	return resp.Body, bufio.NewReaderSize(resp.Body, 32<<10), nil
}

// readEvent reads one watch event, bounded.
func readEvent(r *bufio.Reader) (WatchEvent, error) {
	for {
		var line []byte
		for {
			chunk, err := r.ReadSlice('\n')
			if len(line)+len(chunk) > maxEventBytes {
				return WatchEvent{}, fmt.Errorf("kubernetes watch: an event larger than %d MiB", maxEventBytes>>20)
			}
			line = append(line, chunk...)
			if err == nil || (errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) > 0) {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			return WatchEvent{}, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var ev WatchEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return WatchEvent{}, fmt.Errorf("kubernetes watch: a line that is not an event: %w", err)
		}
		return ev, nil
	}
}

// query builds "?a=b&c=d" from pairs, skipping empty values.
func query(pairs ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			v.Set(pairs[i], pairs[i+1])
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

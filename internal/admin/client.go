package admin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/logtap"
	"github.com/infrarust-go/infrarust/internal/perms"
)

// ErrNoAdminAPI marks "nothing listens at the admin URL", so callers such as shell
// completion can stay silent and `top` can show a reconnecting state.
var ErrNoAdminAPI = errors.New("no admin API")

// APIError is an error answer from the admin API, with the message rewritten where
// the client knows a better next step (401).
type APIError struct {
	Status  int
	Code    string
	Message string
	// RetryAfter is the server's Retry-After on a 429, so a client such as `top`
	// waits as long as asked instead of spending more of its quota.
	RetryAfter time.Duration
}

// Error returns the message alone: it is written to be shown to the operator as is.
func (e *APIError) Error() string { return e.Message }

// Client is the typed admin API client used by the CLI and `infrarust top`; it is the
// one place that knows the paths and the envelopes.
type Client struct {
	base    string
	key     string
	keyHint string
	hc      *http.Client
}

// NewClient talks to baseURL ("http://127.0.0.1:8080"; a bare host:port gets http://).
func NewClient(baseURL, apiKey string) *Client {
	base := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	return &Client{base: base, key: strings.TrimSpace(apiKey), hc: &http.Client{}}
}

// BaseURL is the API root this client talks to, for messages.
func (c *Client) BaseURL() string { return c.base }

// SetKeyFileHint names the key file the CLI would read, so a 401 can point at it.
func (c *Client) SetKeyFileHint(path string) { c.keyHint = path }

// SetHTTPClient replaces the HTTP client (TLS, proxies, tests).
func (c *Client) SetHTTPClient(hc *http.Client) {
	if hc != nil {
		c.hc = hc
	}
}

// Health checks that the API answers; it needs no key.
func (c *Client) Health(ctx context.Context) error {
	var out map[string]string
	return c.do(ctx, http.MethodGet, "/api/v1/health", nil, &out)
}

// Servers lists the configured servers with their totals.
func (c *Client) Servers(ctx context.Context) ([]ServerInfo, error) {
	var out []ServerInfo
	return out, c.do(ctx, http.MethodGet, "/api/v1/servers", nil, &out)
}

// Backends returns one server's addresses as the balancer sees them.
func (c *Client) Backends(ctx context.Context, server string) (Backends, error) {
	var out Backends
	return out, c.do(ctx, http.MethodGet, "/api/v1/servers/"+url.PathEscape(server)+"/backends", nil, &out)
}

// AllBackends returns every server's addresses, keyed by server id.
func (c *Client) AllBackends(ctx context.Context) (map[string]Backends, error) {
	var out map[string]Backends
	return out, c.do(ctx, http.MethodGet, "/api/v1/health/backends", nil, &out)
}

// Drain stops new sessions to addr (existing ones stay); it survives restarts.
func (c *Client) Drain(ctx context.Context, server, addr string) (ActionResult, error) {
	return c.Act(ctx, ActionDrain, server, addr)
}

// Enable lifts a drain.
func (c *Client) Enable(ctx context.Context, server, addr string) (ActionResult, error) {
	return c.Act(ctx, ActionEnable, server, addr)
}

// Reset clears addr's failures, ejections and backoff (it does not lift a drain).
func (c *Client) Reset(ctx context.Context, server, addr string) (ActionResult, error) {
	return c.Act(ctx, ActionReset, server, addr)
}

// Act performs action on server's address addr; callers that hold an Action (the
// CLI's subcommands, the dashboard's keys) use it instead of a switch.
func (c *Client) Act(ctx context.Context, action Action, server, addr string) (ActionResult, error) {
	var out ActionResult
	p := "/api/v1/servers/" + url.PathEscape(server) + "/backends/" + url.PathEscape(addr) + "/" + url.PathEscape(string(action))
	return out, c.do(ctx, http.MethodPost, p, nil, &out)
}

// Server returns one server, with its server-manager state when it has one.
func (c *Client) Server(ctx context.Context, server string) (ServerInfo, error) {
	var out ServerInfo
	return out, c.do(ctx, http.MethodGet, "/api/v1/servers/"+url.PathEscape(server), nil, &out)
}

// StartServer asks the server manager to start a sleeping server.
func (c *Client) StartServer(ctx context.Context, server string) (ServerInfo, error) {
	var out ServerInfo
	return out, c.do(ctx, http.MethodPost, "/api/v1/servers/"+url.PathEscape(server)+"/start", nil, &out)
}

// StopServer asks the server manager to stop a server and waits until it is down.
func (c *Client) StopServer(ctx context.Context, server string) (ServerInfo, error) {
	var out ServerInfo
	return out, c.do(ctx, http.MethodPost, "/api/v1/servers/"+url.PathEscape(server)+"/stop", nil, &out)
}

// SetMaintenance puts a server in maintenance (only maintenance_staff join) or
// takes it out; the change survives a restart.
func (c *Client) SetMaintenance(ctx context.Context, server string, on bool) (ServerInfo, error) {
	var out ServerInfo
	return out, c.do(ctx, http.MethodPost, "/api/v1/servers/"+url.PathEscape(server)+"/maintenance", MaintenanceRequest{On: on}, &out)
}

// Stats returns the proxy-wide summary.
func (c *Client) Stats(ctx context.Context) (Stats, error) {
	var out Stats
	return out, c.do(ctx, http.MethodGet, "/api/v1/stats", nil, &out)
}

// Snapshot returns stats, servers and every server's backends in one request.
func (c *Client) Snapshot(ctx context.Context) (Snapshot, error) {
	var out Snapshot
	return out, c.do(ctx, http.MethodGet, "/api/v1/snapshot", nil, &out)
}

// Bans lists the bans in force.
func (c *Client) Bans(ctx context.Context) ([]bans.Ban, error) {
	var out []bans.Ban
	return out, c.do(ctx, http.MethodGet, "/api/v1/bans", nil, &out)
}

// AddBan adds or replaces a ban and returns it as stored (normalised value,
// expiry), with what the fleet made of it.
func (c *Client) AddBan(ctx context.Context, req BanRequest) (BanResult, error) {
	var out BanResult
	return out, c.do(ctx, http.MethodPost, "/api/v1/bans", req, &out)
}

// RemoveBan lifts the ban of type typ on value and returns the ban as it was,
// with what the fleet made of the change.
func (c *Client) RemoveBan(ctx context.Context, typ bans.Type, value string) (BanResult, error) {
	var out BanResult
	return out, c.do(ctx, http.MethodDelete, "/api/v1/bans/"+url.PathEscape(string(typ))+"/"+url.PathEscape(value), nil, &out)
}

// Players lists the connected players, of one server or ("") of all, by name.
func (c *Client) Players(ctx context.Context, server string) ([]Player, error) {
	p := "/api/v1/players"
	if server != "" {
		p += "?server=" + url.QueryEscape(server)
	}
	var out []Player
	if err := c.do(ctx, http.MethodGet, p, nil, &out); err != nil {
		return nil, c.olderProxy(err, "players API")
	}
	if out == nil {
		out = []Player{}
	}
	return out, nil
}

// SendPlayer moves the player called name (in any case) to server and returns
// them where they landed; force overrides the target's maintenance and
// capacity. A 409 says why the proxy cannot move them, a 403 which of the
// target's rules refused them, a 502 why the target's backend did; either way
// they stayed where they were.
func (c *Client) SendPlayer(ctx context.Context, name, server string, force bool) (Player, error) {
	name, server = strings.TrimSpace(name), strings.TrimSpace(server)
	if name == "" || server == "" {
		return Player{}, errors.New("say which player to send where: a player name and a server id")
	}
	var out Player
	err := c.do(ctx, http.MethodPost, "/api/v1/players/"+url.PathEscape(name)+"/send", SendRequest{Server: server, Force: force}, &out)
	return out, c.olderProxy(err, "players API")
}

// KickPlayer disconnects the player called name with reason (DefaultKickReason
// when empty) and returns them as they were.
func (c *Client) KickPlayer(ctx context.Context, name, reason string) (KickResult, error) {
	if name = strings.TrimSpace(name); name == "" {
		return KickResult{}, errors.New("say which player to kick")
	}
	var out KickResult
	err := c.do(ctx, http.MethodPost, "/api/v1/players/"+url.PathEscape(name)+"/kick", KickRequest{Reason: reason}, &out)
	return out, c.olderProxy(err, "players API")
}

// CreateServer writes a new server file (its keys as a server file has them)
// and reloads the servers; a *APIError of 422 lists the failed checks.
func (c *Client) CreateServer(ctx context.Context, id string, keys map[string]any) (ServerFile, error) {
	var out ServerFile
	err := c.do(ctx, http.MethodPost, "/api/v1/servers", ServerWrite{ID: id, Keys: keys}, &out)
	return out, c.olderProxy(err, "server files API")
}

// EditServer replaces server id's file with keys and reloads the servers.
func (c *Client) EditServer(ctx context.Context, id string, keys map[string]any) (ServerFile, error) {
	var out ServerFile
	err := c.do(ctx, http.MethodPut, "/api/v1/servers/"+url.PathEscape(id), keys, &out)
	return out, c.olderProxy(err, "server files API")
}

// DeleteServer removes server id's file and reloads the servers.
func (c *Client) DeleteServer(ctx context.Context, id string) error {
	err := c.do(ctx, http.MethodDelete, "/api/v1/servers/"+url.PathEscape(id), nil, nil)
	return c.olderProxy(err, "server files API")
}

// MessagePlayer shows text in one player's chat.
func (c *Client) MessagePlayer(ctx context.Context, name, text string) (MessageResult, error) {
	if name = strings.TrimSpace(name); name == "" {
		return MessageResult{}, errors.New("say which player to message")
	}
	var out MessageResult
	err := c.do(ctx, http.MethodPost, "/api/v1/players/"+url.PathEscape(name)+"/message", MessageRequest{Message: text}, &out)
	return out, c.olderProxy(err, "players message API")
}

// Broadcast shows text to every player the proxy speaks to (of server when given).
func (c *Client) Broadcast(ctx context.Context, text, server string) (BroadcastResult, error) {
	var out BroadcastResult
	err := c.do(ctx, http.MethodPost, "/api/v1/players/broadcast", MessageRequest{Message: text, Server: server}, &out)
	return out, c.olderProxy(err, "players broadcast API")
}

// DefaultMoveTimeout bounds a drain with move whose context has no deadline:
// moving every player of an address takes longer than one request.
const DefaultMoveTimeout = 5 * time.Minute

// DrainMove drains addr like Drain, then moves its players to the server's other
// addresses (or its fallback servers); the answer's Move says how many moved and
// how many stayed.
func (c *Client) DrainMove(ctx context.Context, server, addr string) (ActionResult, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultMoveTimeout)
		defer cancel()
	}
	var out ActionResult
	p := "/api/v1/servers/" + url.PathEscape(server) + "/backends/" + url.PathEscape(addr) + "/" + string(ActionDrain)
	err := c.do(ctx, http.MethodPost, p, DrainRequest{Move: true}, &out)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return out, fmt.Errorf("%w; the drain may stand with players still moving: check 'infrarust players list --server %s'", err, server)
	case err != nil:
		return out, err
	case out.Move == nil:
		// An older proxy ignores the body: it drained, and moved nobody.
		return out, fmt.Errorf("drained %s on %s, but the proxy at %s moved nobody: it is older than this CLI (no drain with move); upgrade it, or send the players yourself with 'infrarust players send'", out.Address, server, c.base)
	}
	return out, nil
}

// olderProxy turns the 404 of a route this proxy does not have into the
// likely reason: it predates the feature.
func (c *Client) olderProxy(err error, what string) error {
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound && strings.HasPrefix(ae.Message, noRoutePrefix) {
		ae.Message = fmt.Sprintf("the proxy at %s has no %s: it is older than this CLI; upgrade it (%s)", c.base, what, ae.Message)
	}
	return err
}

// DefaultRequestTimeout bounds a request whose context has no deadline, so a hung
// proxy never hangs the CLI; the event stream is exempt.
const DefaultRequestTimeout = 30 * time.Second

// do sends one request and decodes the data envelope into out.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := c.newRequest(ctx, method, path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.transportError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("admin API at %s: reading the answer: %w", c.base, err)
	}
	if resp.StatusCode/100 != 2 {
		return c.apiError(resp, data)
	}
	env := Envelope[json.RawMessage]{}
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("admin API at %s answered %s %s with something that is not its JSON envelope (%v); is this URL the infrarust admin API?", c.base, method, path, err)
	}
	if out == nil || len(env.Data) == 0 {
		return nil
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("admin API at %s: unexpected %s %s answer (%v); are the CLI and the proxy the same version?", c.base, method, path, err)
	}
	return nil
}

func (c *Client) newRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("admin API URL %q: %w (use e.g. http://127.0.0.1:8080)", c.base, err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", bearerPrefix+c.key)
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// transportError turns a refused connection into the operator's likely cause.
func (c *Client) transportError(err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%w at %s — is `infrarust serve` running? (or point --admin-url / INFRARUST_ADMIN_URL at it)", ErrNoAdminAPI, c.base)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("admin API at %s: %w", c.base, err)
	}
	return fmt.Errorf("admin API at %s unreachable: %w", c.base, err)
}

// apiError decodes the error envelope and rewrites the messages the operator can act on.
func (c *Client) apiError(resp *http.Response, data []byte) error {
	var env ErrorEnvelope
	e := &APIError{Status: resp.StatusCode}
	if json.Unmarshal(data, &env) == nil && env.Error.Code != "" {
		e.Code, e.Message = env.Error.Code, env.Error.Message
	} else {
		e.Code = "HTTP_" + fmt.Sprint(resp.StatusCode)
		snippet := strings.TrimSpace(string(data))
		if len(snippet) > 200 {
			snippet = snippet[:200] + "…"
		}
		e.Message = fmt.Sprintf("admin API at %s answered %s: %s", c.base, resp.Status, snippet)
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		where := "<data_dir>/admin.key"
		if c.keyHint != "" {
			where = c.keyHint
		}
		e.Message = fmt.Sprintf("wrong or missing API key; set INFRARUST_API_KEY or pass --api-key (the key is in %s)", where)
	case http.StatusTooManyRequests:
		ra := strings.TrimSpace(resp.Header.Get("Retry-After"))
		if secs, err := strconv.Atoi(ra); err == nil && secs >= 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
		if ra != "" && !strings.Contains(e.Message, "retry") {
			e.Message += fmt.Sprintf(" (retry in %s s)", ra)
		}
	}
	return e
}

// StreamEvent is one event from GET /api/v1/events; Data is the event's payload,
// to be decoded into the events package's type for Type.
type StreamEvent struct {
	Type events.Type
	Time time.Time
	Data json.RawMessage
}

// EventStream reads Server-Sent Events; Close ends it.
type EventStream struct {
	body   io.ReadCloser
	cancel context.CancelFunc
	sc     *bufio.Scanner
}

// Events subscribes to the live event stream, all types when none are given.
func (c *Client) Events(ctx context.Context, types ...events.Type) (*EventStream, error) {
	p := "/api/v1/events"
	if len(types) > 0 {
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = string(t)
		}
		p += "?types=" + url.QueryEscape(strings.Join(names, ","))
	}
	return c.openStream(ctx, p)
}

// LogQuery filters log lines: a minimum level, one server's or one player's
// lines (empty: all); N is how many lines of history (0: the API's 100).
type LogQuery struct {
	Level, Server, Player string
	N                     int
}

func (q LogQuery) values(history bool) url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"level": q.Level, "server": q.Server, "player": q.Player} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if history && q.N > 0 {
		v.Set("n", strconv.Itoa(q.N))
	}
	return v
}

// LogHistory is the recent log lines q takes, oldest first.
func (c *Client) LogHistory(ctx context.Context, q LogQuery) ([]logtap.Entry, error) {
	var out []logtap.Entry
	err := c.do(ctx, http.MethodGet, "/api/v1/logs/history?"+q.values(true).Encode(), nil, &out)
	return out, c.olderProxy(err, "logs API")
}

// Logs follows the log lines q takes as they are written ("log" events, and
// "lagged" when the client fell behind).
func (c *Client) Logs(ctx context.Context, q LogQuery) (*EventStream, error) {
	s, err := c.openStream(ctx, "/api/v1/logs?"+q.values(false).Encode())
	return s, c.olderProxy(err, "logs API")
}

// openStream opens a Server-Sent Events route.
func (c *Client) openStream(ctx context.Context, p string) (*EventStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := c.newRequest(ctx, http.MethodGet, p, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		cancel()
		return nil, c.transportError(err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		cancel()
		return nil, c.apiError(resp, data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	return &EventStream{body: resp.Body, cancel: cancel, sc: sc}, nil
}

// Next blocks for the next event; io.EOF when the server closed the stream.
func (s *EventStream) Next() (StreamEvent, error) {
	typ, data, err := s.NextRaw()
	if err != nil {
		return StreamEvent{}, err
	}
	return decodeStreamEvent(typ, data)
}

// NextRaw blocks for the next item of any stream: its event name and its data
// line as sent (a log line's JSON, say); io.EOF when the server closed it.
func (s *EventStream) NextRaw() (typ, data string, err error) {
	var lines []string
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if len(lines) == 0 {
				typ = ""
				continue
			}
			return typ, strings.Join(lines, "\n"), nil
		case strings.HasPrefix(line, ":"):
			// comment (keep-alive)
		case strings.HasPrefix(line, "event:"):
			typ = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := s.sc.Err(); err != nil {
		return "", "", fmt.Errorf("event stream: %w", err)
	}
	return "", "", io.EOF
}

// decodeStreamEvent reads one `data:` payload, which is an events.Event; its
// payload is kept raw for the caller to decode by type.
func decodeStreamEvent(typ, data string) (StreamEvent, error) {
	var raw struct {
		events.Event
		Data json.RawMessage `json:"data"` // shadows Event.Data
	}
	if err := json.Unmarshal([]byte(data), &raw); err != nil {
		return StreamEvent{}, fmt.Errorf("event stream: bad event %q: %w", typ, err)
	}
	t := events.Type(typ)
	if t == "" {
		t = raw.Type
	}
	return StreamEvent{Type: t, Time: raw.Time, Data: raw.Data}, nil
}

// Close ends the stream and releases its connection; safe to call twice.
func (s *EventStream) Close() error {
	s.cancel()
	return s.body.Close()
}

// Admins lists the proxy's admins: configured and stored.
func (c *Client) Admins(ctx context.Context) (AdminsView, error) {
	var out AdminsView
	return out, c.do(ctx, http.MethodGet, "/api/v1/permissions/admins", nil, &out)
}

// Reload reloads infrarust.toml and servers_dir, as SIGHUP does.
func (c *Client) Reload(ctx context.Context) (ReloadResult, error) {
	var out ReloadResult
	return out, c.do(ctx, http.MethodPost, "/api/v1/reload", nil, &out)
}

// Fingerprint is the running configuration's keys with a digest of each value.
func (c *Client) Fingerprint(ctx context.Context) (map[string]string, error) {
	var out map[string]string
	return out, c.do(ctx, http.MethodGet, "/api/v1/config/fingerprint", nil, &out)
}

// Permissions lists the groups of the file and the stored ones.
func (c *Client) Permissions(ctx context.Context) (PermissionsView, error) {
	var out PermissionsView
	return out, c.do(ctx, http.MethodGet, "/api/v1/permissions", nil, &out)
}

// ChangePermissions makes one change of the stored groups.
func (c *Client) ChangePermissions(ctx context.Context, ch perms.Change) (PermissionsView, error) {
	var out PermissionsView
	base := "/api/v1/permissions/groups/" + url.PathEscape(ch.Group)
	var method, path string
	var body any
	switch ch.Op {
	case perms.OpCreate:
		method, path, body = http.MethodPut, base, GroupRequest{Servers: ch.Servers}
	case perms.OpDelete:
		method, path = http.MethodDelete, base
	case perms.OpGrant:
		method, path, body = http.MethodPost, base+"/permissions", PermissionRequest{Permission: ch.Value}
	case perms.OpRevoke:
		method, path = http.MethodDelete, base+"/permissions/"+url.PathEscape(ch.Value)
	case perms.OpAdd:
		method, path, body = http.MethodPost, base+"/members", AdminRequest{Player: ch.Value}
	case perms.OpRemove:
		method, path = http.MethodDelete, base+"/members/"+url.PathEscape(ch.Value)
	default:
		return out, fmt.Errorf("unknown change %q", ch.Op)
	}
	return out, c.do(ctx, method, path, body, &out)
}

// Op makes player (a name or a UUID) an admin: a stored member of the admins group.
func (c *Client) Op(ctx context.Context, player string) (AdminsView, error) {
	var out AdminsView
	return out, c.do(ctx, http.MethodPost, "/api/v1/permissions/admins", AdminRequest{Player: player}, &out)
}

// Deop removes a stored admin.
func (c *Client) Deop(ctx context.Context, player string) (AdminsView, error) {
	var out AdminsView
	return out, c.do(ctx, http.MethodDelete, "/api/v1/permissions/admins/"+url.PathEscape(player), nil, &out)
}

package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/propagation"
)

// Endpoint is one configured webhook's address and how to reach it.
type Endpoint struct {
	URL     string
	Secret  []byte // "" sends no signature
	Timeout time.Duration
	// Client sends the requests; nil means a client built by NewClient.
	Client *http.Client
}

// NewClient is the HTTP client webhooks share: enough idle connections per host that
// a burst of logins does not open a TCP connection each, and no redirects (a POST
// turned into a GET would lose the event).
func NewClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.MaxConnsPerHost = 256 // a slow endpoint gets a bounded number of requests in flight
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// traceContext puts the session's trace id in traceparent, so a traced login and the
// webhook it called show up in one trace; without a span it writes nothing.
var traceContext = propagation.TraceContext{}

// post sends body once, within the endpoint's timeout, and returns the status and
// at most MaxAnswer bytes of the answer.
func (e *Endpoint) post(ctx context.Context, env *Envelope, body []byte) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "infrarust-webhook")
	req.Header.Set(EventHeader, env.Event)
	req.Header.Set(DeliveryHeader, env.ID)
	if len(e.Secret) > 0 {
		req.Header.Set(SignatureHeader, Sign(e.Secret, body))
	}
	traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := e.Client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer+1))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(answer) > MaxAnswer {
		return resp.StatusCode, nil, fmt.Errorf("answer longer than %d bytes", MaxAnswer)
	}
	return resp.StatusCode, answer, nil
}

// Decider is a decide = true webhook: the login waits for its answer.
type Decider struct {
	Endpoint
}

// NewDecider makes a deciding webhook; a nil client means NewClient's.
func NewDecider(ep Endpoint) *Decider {
	if ep.Client == nil {
		ep.Client = NewClient()
	}
	return &Decider{Endpoint: ep}
}

// Decide sends env and returns the endpoint's verdict. Any error (timeout, refused
// connection, a status other than 2xx, an answer that is not a verdict) is returned
// for the caller's on_error to decide.
func (d *Decider) Decide(ctx context.Context, env *Envelope) (Verdict, error) {
	body, err := json.Marshal(env)
	if err != nil {
		return Verdict{}, fmt.Errorf("encoding the event: %w", err)
	}
	status, answer, err := d.post(ctx, env, body)
	if err != nil {
		return Verdict{}, err
	}
	if status < 200 || status > 299 {
		return Verdict{}, fmt.Errorf("answered HTTP %d", status)
	}
	return ParseVerdict(answer)
}

// Package telemetrytest is an in-process OTLP/HTTP trace collector for tests: it
// decodes what the proxy exports with the OpenTelemetry project's own protobuf
// types (not our encoder), so a test that passes proves the wire format.
package telemetrytest

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, flattened.
type Span struct {
	Name         string
	TraceID      string // hex
	SpanID       string // hex
	ParentSpanID string // hex, "" for a root
	Kind         tracepb.Span_SpanKind
	Attributes   map[string]any // string, int64, bool, float64 or []any
	Events       []string       // event names
	Status       tracepb.Status_StatusCode
	StatusText   string
	Resource     map[string]any
	Scope        string
	StartNano    uint64
	EndNano      uint64
}

// Collector receives POSTs on /v1/traces.
type Collector struct {
	*httptest.Server

	mu       sync.Mutex
	spans    []Span
	requests int
	headers  []http.Header
	errs     []error
	arrived  chan struct{}
}

// NewCollector starts a collector on 127.0.0.1, closed when the test ends.
func NewCollector(t testing.TB) *Collector {
	t.Helper()
	c := &Collector{arrived: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", c.serve)
	c.Server = httptest.NewServer(mux)
	t.Cleanup(c.Server.Close)
	return c
}

// Endpoint is the base URL to put in [telemetry] endpoint.
func (c *Collector) Endpoint() string { return c.URL }

func (c *Collector) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	var td tracepb.TracesData // same fields and numbers as ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &td)
	}
	if err == nil && r.Header.Get("Content-Type") != "application/x-protobuf" {
		err = fmt.Errorf("content-type %q", r.Header.Get("Content-Type"))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	c.headers = append(c.headers, r.Header.Clone())
	if err != nil {
		c.errs = append(c.errs, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rs := range td.ResourceSpans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{
					Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					Kind: s.Kind, Attributes: attrs(s.Attributes), Status: s.GetStatus().GetCode(),
					StatusText: s.GetStatus().GetMessage(), Resource: res, Scope: ss.GetScope().GetName(),
					StartNano: s.StartTimeUnixNano, EndNano: s.EndTimeUnixNano,
				}
				if len(s.ParentSpanId) > 0 {
					sp.ParentSpanID = hex.EncodeToString(s.ParentSpanId)
				}
				for _, e := range s.Events {
					sp.Events = append(sp.Events, e.Name)
				}
				c.spans = append(c.spans, sp)
			}
		}
	}
	close(c.arrived)
	c.arrived = make(chan struct{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[kv.Key] = value(kv.Value)
	}
	return out
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

// Spans returns every span received so far.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans)
}

// Named returns the received spans called name.
func (c *Collector) Named(name string) []Span {
	var out []Span
	for _, s := range c.Spans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Errors returns the requests that could not be decoded.
func (c *Collector) Errors() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.errs)
}

// Headers returns the headers of every request received.
func (c *Collector) Headers() []http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.headers)
}

// Arrived returns a channel closed when the next request has been decoded.
func (c *Collector) Arrived() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.arrived
}

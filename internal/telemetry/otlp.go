package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// otlpExporter sends spans to an OTLP/HTTP collector as protobuf. It is ours rather
// than the OpenTelemetry otlptracehttp module because that module links gRPC and
// grpc-gateway (about 6 MB of the binary) for a request this file encodes in a
// few lines with protowire, which the binary already carries.
type otlpExporter struct {
	url     string
	headers map[string]string
	client  *http.Client
	log     *slog.Logger

	logged  atomic.Int64 // unix nanos of the last failure logged
	failed  atomic.Uint64
	batches atomic.Uint64
}

// tracesURL is endpoint with /v1/traces added when it names no path.
func tracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// ExportSpans posts one batch. A failure is logged (at most once a minute) and
// counted, never returned: the SDK would hand it to OpenTelemetry's global error
// handler, which prints to stderr outside our logger.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body := encodeTraces(spans)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		e.fail(err, len(spans))
		return nil
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "infrarust-otlp")
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.fail(err, len(spans))
		return nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e.fail(fmt.Errorf("collector answered HTTP %d", resp.StatusCode), len(spans))
		return nil
	}
	e.batches.Add(1)
	return nil
}

func (e *otlpExporter) fail(err error, spans int) {
	e.failed.Add(1)
	now := time.Now().UnixNano()
	last := e.logged.Load()
	if last != 0 && now-last < int64(time.Minute) || !e.logged.CompareAndSwap(last, now) {
		return
	}
	e.log.Warn("trace export failed; spans dropped (logged at most once a minute)", "url", e.url, "spans", spans, "err", err, "failed_batches", e.failed.Load())
}

// Shutdown has nothing to release: the client's idle connections close by themselves.
func (e *otlpExporter) Shutdown(context.Context) error { return nil }

// Field numbers of opentelemetry/proto/collector/trace/v1 and trace/v1, common/v1,
// resource/v1 (OTLP 1.x; the messages and numbers are stable).
const (
	fReqResourceSpans = 1 // ExportTraceServiceRequest.resource_spans

	fRSResource   = 1 // ResourceSpans.resource
	fRSScopeSpans = 2 // ResourceSpans.scope_spans

	fResAttributes = 1 // Resource.attributes

	fSSScope = 1 // ScopeSpans.scope
	fSSSpans = 2 // ScopeSpans.spans

	fScopeName    = 1
	fScopeVersion = 2

	fSpanTraceID      = 1
	fSpanSpanID       = 2
	fSpanTraceState   = 3
	fSpanParentSpanID = 4
	fSpanName         = 5
	fSpanKind         = 6
	fSpanStart        = 7
	fSpanEnd          = 8
	fSpanAttributes   = 9
	fSpanDroppedAttrs = 10
	fSpanEvents       = 11
	fSpanStatus       = 15
	fSpanFlags        = 16

	fEventTime       = 1
	fEventName       = 2
	fEventAttributes = 3

	fStatusMessage = 2
	fStatusCode    = 3

	fKVKey   = 1
	fKVValue = 2

	fAnyString = 1
	fAnyBool   = 2
	fAnyInt    = 3
	fAnyDouble = 4
	fAnyArray  = 5

	fArrayValues = 1
)

// encodeTraces builds an ExportTraceServiceRequest: spans are grouped by resource
// and scope, in the order they come.
func encodeTraces(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct{ name, version string }
	type group struct {
		res    []byte
		scopes map[scopeKey][]byte
		order  []scopeKey
	}
	var groups []*group
	byRes := map[attribute.Distinct]*group{}
	for _, s := range spans {
		rk := s.Resource().Equivalent()
		g := byRes[rk]
		if g == nil {
			var res []byte
			for _, kv := range s.Resource().Attributes() {
				res = appendMessage(res, fResAttributes, appendKeyValue(nil, kv))
			}
			g = &group{res: res, scopes: map[scopeKey][]byte{}}
			byRes[rk] = g
			groups = append(groups, g)
		}
		sc := s.InstrumentationScope()
		sk := scopeKey{sc.Name, sc.Version}
		if _, ok := g.scopes[sk]; !ok {
			g.order = append(g.order, sk)
		}
		g.scopes[sk] = appendMessage(g.scopes[sk], fSSSpans, appendSpan(nil, s))
	}
	var out []byte
	for _, g := range groups {
		var rs []byte
		rs = appendMessage(rs, fRSResource, g.res)
		for _, sk := range g.order {
			var scope []byte
			scope = appendString(scope, fScopeName, sk.name)
			scope = appendString(scope, fScopeVersion, sk.version)
			ss := appendMessage(nil, fSSScope, scope)
			ss = append(ss, g.scopes[sk]...)
			rs = appendMessage(rs, fRSScopeSpans, ss)
		}
		out = appendMessage(out, fReqResourceSpans, rs)
	}
	return out
}

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, fSpanTraceID, tid[:])
	b = appendBytes(b, fSpanSpanID, sid[:])
	b = appendString(b, fSpanTraceState, sc.TraceState().String())
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		b = appendBytes(b, fSpanParentSpanID, psid[:])
	}
	b = appendString(b, fSpanName, s.Name())
	b = appendVarint(b, fSpanKind, uint64(spanKind(s.SpanKind())))
	b = appendFixed64(b, fSpanStart, uint64(s.StartTime().UnixNano()))
	b = appendFixed64(b, fSpanEnd, uint64(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		b = appendMessage(b, fSpanAttributes, appendKeyValue(nil, kv))
	}
	b = appendVarint(b, fSpanDroppedAttrs, uint64(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		var e []byte
		e = appendFixed64(e, fEventTime, uint64(ev.Time.UnixNano()))
		e = appendString(e, fEventName, ev.Name)
		for _, kv := range ev.Attributes {
			e = appendMessage(e, fEventAttributes, appendKeyValue(nil, kv))
		}
		b = appendMessage(b, fSpanEvents, e)
	}
	var st []byte
	st = appendString(st, fStatusMessage, s.Status().Description)
	st = appendVarint(st, fStatusCode, uint64(statusCode(s.Status().Code)))
	b = appendMessage(b, fSpanStatus, st)
	// flags: the W3C trace flags in the low byte, and bit 8 set: "the parent's
	// remoteness is known" (bit 9 says it is remote).
	flags := uint32(sc.TraceFlags()) | 1<<8
	if s.Parent().IsRemote() {
		flags |= 1 << 9
	}
	b = protowire.AppendTag(b, fSpanFlags, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, flags)
}

// spanKind maps the API's kinds to OTLP's (the numbers differ by nothing today,
// but the mapping keeps it explicit).
func spanKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal:
		return 1
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	}
	return 0
}

func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

func appendKeyValue(b []byte, kv attribute.KeyValue) []byte {
	b = appendString(b, fKVKey, string(kv.Key))
	return appendMessage(b, fKVValue, appendAnyValue(nil, kv.Value))
}

func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		b = protowire.AppendTag(b, fAnyBool, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, fAnyInt, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, fAnyDouble, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRINGSLICE:
		var arr []byte
		for _, s := range v.AsStringSlice() {
			arr = appendMessage(arr, fArrayValues, appendAnyValue(nil, attribute.StringValue(s)))
		}
		return appendMessage(b, fAnyArray, arr)
	case attribute.INT64SLICE:
		var arr []byte
		for _, n := range v.AsInt64Slice() {
			arr = appendMessage(arr, fArrayValues, appendAnyValue(nil, attribute.Int64Value(n)))
		}
		return appendMessage(b, fAnyArray, arr)
	case attribute.BOOLSLICE:
		var arr []byte
		for _, x := range v.AsBoolSlice() {
			arr = appendMessage(arr, fArrayValues, appendAnyValue(nil, attribute.BoolValue(x)))
		}
		return appendMessage(b, fAnyArray, arr)
	case attribute.FLOAT64SLICE:
		var arr []byte
		for _, x := range v.AsFloat64Slice() {
			arr = appendMessage(arr, fArrayValues, appendAnyValue(nil, attribute.Float64Value(x)))
		}
		return appendMessage(b, fAnyArray, arr)
	}
	b = protowire.AppendTag(b, fAnyString, protowire.BytesType)
	return protowire.AppendString(b, v.Emit())
}

// appendMessage writes an embedded message (even an empty one: its presence matters
// for a oneof such as AnyValue).
func appendMessage(b []byte, num protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

// appendString writes a string field, leaving out the empty string as proto3 does.
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// Package telemetry traces player sessions with OpenTelemetry: one span per login
// (server, player, proxy mode, client IP, backend address, outcome) with child
// spans for the backend dial, the Mojang authentication, a server wake and a
// server switch, exported over OTLP/HTTP when [telemetry] is enabled.
//
// Off (a nil *Tracer) it costs nothing: every method is a nil check that returns
// a shared no-op, with no allocation and no clock read.
package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/infrarust-go/infrarust/internal/config"
)

// Span and attribute names; docs/events.md lists them for operators' queries.
const (
	SpanSession = "minecraft.session"
	SpanDial    = "backend.dial"
	SpanAuth    = "auth.mojang"
	SpanWake    = "server.wake"
	SpanSwitch  = "server.switch"

	AttrServer    = "infrarust.server"
	AttrPlayer    = "infrarust.player.name"
	AttrPlayerID  = "infrarust.player.uuid"
	AttrProxyMode = "infrarust.proxy_mode"
	AttrClientIP  = "client.address"
	AttrHost      = "infrarust.host"
	AttrProtocol  = "infrarust.protocol"
	AttrBackend   = "infrarust.backend.address"
	AttrOutcome   = "infrarust.outcome"
	AttrFrom      = "infrarust.switch.from"
)

// Options build a Tracer.
type Options struct {
	Config config.Telemetry
	// Version is the service.version resource attribute.
	Version string
	// Logger receives export failures (throttled); nil discards.
	Logger *slog.Logger
	// Exporter replaces the OTLP/HTTP exporter (tests); nil means OTLP to Config.Endpoint.
	Exporter sdktrace.SpanExporter
	// BatchTimeout is how long spans wait to be batched; 0 means the SDK's 5 s.
	BatchTimeout time.Duration
	// Client sends the exports; nil means a client with Config.Timeout.
	Client *http.Client
}

// Tracer starts session spans. A nil *Tracer traces nothing.
type Tracer struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
}

// New builds the tracer, or returns nil (tracing off) when [telemetry] is not enabled.
func New(o Options) (*Tracer, error) {
	if !o.Config.Enabled {
		return nil, nil
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	exp := o.Exporter
	if exp == nil {
		u, err := tracesURL(o.Config.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("[telemetry] endpoint: %w", err)
		}
		client := o.Client
		if client == nil {
			client = &http.Client{Timeout: o.Config.Timeout.D()}
		}
		exp = &otlpExporter{url: u, headers: o.Config.Headers, client: client, log: log}
	}
	name := o.Config.ServiceName
	if name == "" {
		name = "infrarust"
	}
	res := resource.NewSchemaless(attribute.String("service.name", name), attribute.String("service.version", o.Version))
	batch := []sdktrace.BatchSpanProcessorOption{}
	if o.BatchTimeout > 0 {
		batch = append(batch, sdktrace.WithBatchTimeout(o.BatchTimeout))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, batch...),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(o.Config.SampleRatio))),
	)
	return &Tracer{tp: tp, tracer: tp.Tracer("github.com/infrarust-go/infrarust", trace.WithInstrumentationVersion(o.Version))}, nil
}

// Flush exports every ended span now (tests, and before a planned stop).
func (t *Tracer) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.ForceFlush(ctx)
}

// Shutdown exports what is left, within ctx, and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// SessionInfo is what a session span is tagged with when it starts.
type SessionInfo struct {
	Server    string
	Username  string
	ProxyMode string
	ClientIP  netip.Addr
	Host      string
	Protocol  int32
}

// Session is one player's trace. A nil *Session (tracing off, or this session
// not sampled) records nothing.
type Session struct {
	span trace.Span
	ctx  context.Context
	tr   trace.Tracer
}

// StartSession opens the session span; the returned context carries it, so the
// events fired with it and the webhooks they call join the trace.
func (t *Tracer) StartSession(ctx context.Context, info SessionInfo) (context.Context, *Session) {
	if t == nil {
		return ctx, nil
	}
	ctx, span := t.tracer.Start(ctx, SpanSession, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String(AttrServer, info.Server),
		attribute.String(AttrPlayer, info.Username),
		attribute.String(AttrProxyMode, info.ProxyMode),
		attribute.String(AttrClientIP, info.ClientIP.String()),
		attribute.String(AttrHost, info.Host),
		attribute.Int(AttrProtocol, int(info.Protocol)),
	))
	if !span.IsRecording() {
		return ctx, nil
	}
	return ctx, &Session{span: span, ctx: ctx, tr: t.tracer}
}

// SetPlayer records the player's final identity (after authentication or a
// GameProfileRequest handler).
func (s *Session) SetPlayer(name, uuid string) {
	if s == nil {
		return
	}
	s.span.SetAttributes(attribute.String(AttrPlayer, name), attribute.String(AttrPlayerID, uuid))
}

// SetServer records the server the player ends up on (after a redirect).
func (s *Session) SetServer(server string) {
	if s == nil {
		return
	}
	s.span.SetAttributes(attribute.String(AttrServer, server))
}

// SetBackend records the backend address the session was forwarded to.
func (s *Session) SetBackend(address string) {
	if s == nil {
		return
	}
	s.span.SetAttributes(attribute.String(AttrBackend, address))
}

// End closes the session span with its outcome (the Disconnect outcomes, or a
// refusal reason such as "ban" or "rate_limit"); a non-nil err marks it failed.
func (s *Session) End(outcome string, err error) {
	if s == nil {
		return
	}
	s.span.SetAttributes(attribute.String(AttrOutcome, outcome))
	if err != nil {
		s.span.SetStatus(codes.Error, err.Error())
	}
	s.span.End()
}

// EndFunc closes a child span; err marks it failed.
type EndFunc func(err error)

func noEnd(error) {}

// Dial opens a child span for one backend connection attempt (dial and login answer).
func (s *Session) Dial(address string) EndFunc {
	if s == nil {
		return noEnd
	}
	return s.child(SpanDial, trace.SpanKindClient, attribute.String(AttrBackend, address))
}

// Auth opens a child span for the Mojang session-server check.
func (s *Session) Auth() EndFunc {
	if s == nil {
		return noEnd
	}
	return s.child(SpanAuth, trace.SpanKindClient)
}

// Wake opens a child span for starting a sleeping server.
func (s *Session) Wake(server string) EndFunc {
	if s == nil {
		return noEnd
	}
	return s.child(SpanWake, trace.SpanKindInternal, attribute.String(AttrServer, server))
}

// Switch opens a child span for moving the player from one server to another.
func (s *Session) Switch(from, to string) EndFunc {
	if s == nil {
		return noEnd
	}
	return s.child(SpanSwitch, trace.SpanKindInternal, attribute.String(AttrFrom, from), attribute.String(AttrServer, to))
}

func (s *Session) child(name string, kind trace.SpanKind, attrs ...attribute.KeyValue) EndFunc {
	_, span := s.tr.Start(s.ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return func(err error) {
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

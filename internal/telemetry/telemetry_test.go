package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/telemetry"
	"github.com/infrarust-go/infrarust/internal/telemetry/telemetrytest"
)

func tracer(t *testing.T, c *telemetrytest.Collector, ratio float64) *telemetry.Tracer {
	t.Helper()
	tr, err := telemetry.New(telemetry.Options{
		Config: config.Telemetry{
			Enabled: true, Endpoint: c.Endpoint(), ServiceName: "infrarust-test", SampleRatio: ratio,
			Headers: map[string]string{"X-Api-Key": "k1"}, Timeout: config.Duration(5 * time.Second),
		},
		Version: "1.2.3",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return tr
}

// TestSessionSpansReachTheCollector: a session with a failed and a good dial, an
// authentication, a wake and a switch arrives at an OTLP collector (decoded with
// the OpenTelemetry protobuf types) with its attributes and parent links.
func TestSessionSpansReachTheCollector(t *testing.T) {
	c := telemetrytest.NewCollector(t)
	tr := tracer(t, c, 1)
	ctx, s := tr.StartSession(context.Background(), telemetry.SessionInfo{
		Server: "lobby", Username: "alice", ProxyMode: "client_only",
		ClientIP: netip.MustParseAddr("2001:db8::7"), Host: "play.example.com", Protocol: 767,
	})
	if s == nil || ctx == context.Background() {
		t.Fatal("no session while tracing is on")
	}
	s.Auth()(nil)
	s.SetPlayer("Alice", "069a79f4-44e9-4726-a5be-fca90e38aaf5")
	s.Wake("lobby")(nil)
	s.Dial("10.0.0.1:25565")(errors.New("connection refused"))
	s.Dial("10.0.0.2:25565")(nil)
	s.SetBackend("10.0.0.2:25565")
	s.Switch("lobby", "survival")(nil)
	s.SetServer("survival")
	s.End("played", nil)
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if errs := c.Errors(); len(errs) > 0 {
		t.Fatalf("collector could not decode: %v", errs)
	}
	roots := c.Named(telemetry.SpanSession)
	if len(roots) != 1 {
		t.Fatalf("%d session spans, want 1: %+v", len(roots), c.Spans())
	}
	root := roots[0]
	want := map[string]any{
		telemetry.AttrServer: "survival", telemetry.AttrPlayer: "Alice", telemetry.AttrPlayerID: "069a79f4-44e9-4726-a5be-fca90e38aaf5",
		telemetry.AttrProxyMode: "client_only", telemetry.AttrClientIP: "2001:db8::7", telemetry.AttrHost: "play.example.com",
		telemetry.AttrProtocol: int64(767), telemetry.AttrBackend: "10.0.0.2:25565", telemetry.AttrOutcome: "played",
	}
	for k, v := range want {
		if root.Attributes[k] != v {
			t.Errorf("session attribute %s = %#v, want %#v", k, root.Attributes[k], v)
		}
	}
	if root.Kind != tracepb.Span_SPAN_KIND_SERVER || root.ParentSpanID != "" || root.Status != tracepb.Status_STATUS_CODE_UNSET {
		t.Errorf("session span kind %v parent %q status %v", root.Kind, root.ParentSpanID, root.Status)
	}
	if root.Resource["service.name"] != "infrarust-test" || root.Resource["service.version"] != "1.2.3" || root.Scope != "github.com/infrarust-go/infrarust" {
		t.Errorf("resource %v scope %q", root.Resource, root.Scope)
	}
	if root.EndNano <= root.StartNano {
		t.Errorf("session span times %d..%d", root.StartNano, root.EndNano)
	}
	children := map[string]int{}
	for _, sp := range c.Spans() {
		if sp.Name == telemetry.SpanSession {
			continue
		}
		children[sp.Name]++
		if sp.ParentSpanID != root.SpanID || sp.TraceID != root.TraceID {
			t.Errorf("%s is not a child of the session: parent %s trace %s", sp.Name, sp.ParentSpanID, sp.TraceID)
		}
		if sp.Name == telemetry.SpanDial {
			failed := sp.Attributes[telemetry.AttrBackend] == "10.0.0.1:25565"
			if failed != (sp.Status == tracepb.Status_STATUS_CODE_ERROR) || (failed && sp.StatusText != "connection refused") {
				t.Errorf("dial %v: status %v %q", sp.Attributes[telemetry.AttrBackend], sp.Status, sp.StatusText)
			}
			if sp.Kind != tracepb.Span_SPAN_KIND_CLIENT {
				t.Errorf("dial kind %v", sp.Kind)
			}
		}
		if sp.Name == telemetry.SpanSwitch && (sp.Attributes[telemetry.AttrFrom] != "lobby" || sp.Attributes[telemetry.AttrServer] != "survival") {
			t.Errorf("switch attributes %v", sp.Attributes)
		}
	}
	if children[telemetry.SpanDial] != 2 || children[telemetry.SpanAuth] != 1 || children[telemetry.SpanWake] != 1 || children[telemetry.SpanSwitch] != 1 {
		t.Errorf("child spans %v", children)
	}
	for _, h := range c.Headers() {
		if h.Get("X-Api-Key") != "k1" {
			t.Errorf("export without the configured header: %v", h)
		}
	}
}

func TestFailedSessionIsMarked(t *testing.T) {
	c := telemetrytest.NewCollector(t)
	tr := tracer(t, c, 1)
	_, s := tr.StartSession(context.Background(), telemetry.SessionInfo{Server: "lobby", Username: "bob", ClientIP: netip.MustParseAddr("192.0.2.1")})
	s.End("denied", errors.New("banned"))
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	sp := c.Named(telemetry.SpanSession)
	if len(sp) != 1 || sp[0].Status != tracepb.Status_STATUS_CODE_ERROR || sp[0].StatusText != "banned" || sp[0].Attributes[telemetry.AttrOutcome] != "denied" {
		t.Fatalf("spans %+v", sp)
	}
}

func TestOffAndUnsampledCostNothing(t *testing.T) {
	off, err := telemetry.New(telemetry.Options{Config: config.Telemetry{Enabled: false}})
	if err != nil || off != nil {
		t.Fatalf("disabled telemetry built %v, %v", off, err)
	}
	c := telemetrytest.NewCollector(t)
	none := tracer(t, c, 0)
	ctx := context.Background()
	info := telemetry.SessionInfo{Server: "lobby", Username: "alice", ClientIP: netip.MustParseAddr("192.0.2.1")}
	allocs := testing.AllocsPerRun(100, func() {
		_, s := off.StartSession(ctx, info)
		s.Dial("a:1")(nil)
		s.Auth()(nil)
		s.SetBackend("a:1")
		s.End("played", nil)
	})
	if allocs != 0 {
		t.Errorf("tracing off allocates %.0f times per session, want 0", allocs)
	}
	if _, s := none.StartSession(ctx, info); s != nil {
		t.Error("an unsampled session records")
	}
	if err := none.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(c.Spans()); n != 0 {
		t.Errorf("sample_ratio 0 exported %d spans", n)
	}
}

// TestEveryAttributeTypeDecodes checks the encoder's AnyValue cases against the
// OpenTelemetry decoder, through a span event (hooks add those with attributes).
func TestEveryAttributeTypeDecodes(t *testing.T) {
	c := telemetrytest.NewCollector(t)
	tr := tracer(t, c, 1)
	ctx, s := tr.StartSession(context.Background(), telemetry.SessionInfo{Server: "x"})
	_ = ctx
	s.SetAttributesForTest(
		attribute.Bool("b", true), attribute.Int64("i", -42), attribute.Float64("f", 1.5),
		attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1, 2}),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Float64Slice("fs", []float64{0.5}),
		attribute.String("empty", ""),
	)
	s.End("played", nil)
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	sp := c.Named(telemetry.SpanSession)
	if len(sp) != 1 {
		t.Fatalf("spans: %+v (errors %v)", c.Spans(), c.Errors())
	}
	a := sp[0].Attributes
	checks := map[string]string{
		"b": "true", "i": "-42", "f": "1.5", "ss": "[a b]", "is": "[1 2]", "bs": "[true false]", "fs": "[0.5]", "empty": "",
	}
	for k, want := range checks {
		if got := fmtAny(a[k]); got != want {
			t.Errorf("attribute %s = %s, want %s", k, got, want)
		}
	}
}

func fmtAny(v any) string { return fmt.Sprint(v) }

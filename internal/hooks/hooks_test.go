package hooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/hooks"
	"github.com/infrarust-go/infrarust/internal/hooks/hookstest"
	"github.com/infrarust-go/infrarust/internal/testutil"
	"github.com/infrarust-go/infrarust/internal/webhook"
)

// metrics records what the dispatcher reports.
type metrics struct {
	mu       sync.Mutex
	failures []string // handler/event/why
	webhook  []string // url/event
	dropped  atomic.Int64
}

func (m *metrics) HandlerFailed(h, e, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures = append(m.failures, h+"/"+e+"/"+why)
}

func (m *metrics) WebhookFailed(url, e string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.webhook = append(m.webhook, url+"/"+e)
}

func (m *metrics) WebhookDropped(string) { m.dropped.Add(1) }

func (m *metrics) handlerFailures() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.failures...)
}

func conn(id uint64) hooks.Connection {
	return hooks.Connection{ID: id, ClientIP: netip.MustParseAddr("192.0.2.7"), Host: "play.example.com", Protocol: 767, ProxyMode: "passthrough"}
}

func TestHandlersRunInOrderAndSeeEarlierResults(t *testing.T) {
	reg := hooks.NewRegistry()
	var seen hooks.Result
	hooks.On(reg, "first", func(_ context.Context, e *hooks.ChooseInitialServer) { e.Redirect("hub-a") })
	hooks.On(reg, "second", func(_ context.Context, e *hooks.ChooseInitialServer) {
		seen = e.Result()
		e.Redirect("hub-b")
	})
	d := hookstest.New(t, hooks.Options{Handlers: reg})
	ev := &hooks.ChooseInitialServer{Connection: conn(1), Server: "lobby", Profile: hooks.Profile{Name: "alice"}}
	res := hooks.Fire(d, context.Background(), ev)
	if seen.Action != hooks.Redirect || seen.Server != "hub-a" || seen.By != "first" {
		t.Errorf("second handler saw %+v, want the first's redirect to hub-a", seen)
	}
	if !res.Redirected() || res.Server != "hub-b" || res.By != "second" {
		t.Errorf("result = %+v, want redirect to hub-b by second", res)
	}
	if ev.Result() != res {
		t.Errorf("the event holds %+v, Fire returned %+v", ev.Result(), res)
	}
	if ev.Server != "lobby" {
		t.Errorf("the event's fields changed: server %q", ev.Server)
	}
}

func TestDenyIsFinal(t *testing.T) {
	reg := hooks.NewRegistry()
	var later atomic.Int32
	hooks.On(reg, "gate", func(_ context.Context, e *hooks.PreLogin) {
		if e.Username == "griefer" {
			e.Deny("§cBanned by gate")
		}
	})
	hooks.On(reg, "later", func(_ context.Context, e *hooks.PreLogin) { later.Add(1) })
	wh := hookstest.NewWebhookServer(t, "")
	d := hookstest.New(t, hooks.Options{Handlers: reg, Webhooks: []config.Webhook{{URL: wh.URL, Events: []string{"pre_login"}, Decide: true}}})

	res := hooks.Fire(d, context.Background(), &hooks.PreLogin{Connection: conn(1), Username: "griefer"})
	if !res.Denied() || res.Reason != "§cBanned by gate" || res.By != "gate" {
		t.Fatalf("result = %+v", res)
	}
	if later.Load() != 0 || len(wh.Deliveries()) != 0 {
		t.Errorf("after a denial: later handler ran %d times, webhook asked %d times; want neither", later.Load(), len(wh.Deliveries()))
	}
	res = hooks.Fire(d, context.Background(), &hooks.PreLogin{Connection: conn(2), Username: "alice"})
	if res.Action != hooks.Continue || later.Load() != 1 || len(wh.Deliveries()) != 1 {
		t.Errorf("alice: result %+v, later ran %d, webhook asked %d; want continue, 1, 1", res, later.Load(), len(wh.Deliveries()))
	}
}

func TestPanickingHandlerIsLoggedAndSkipped(t *testing.T) {
	reg := hooks.NewRegistry()
	hooks.On(reg, "buggy", func(_ context.Context, e *hooks.Login) {
		e.Deny("never seen") // set before the panic: must not count
		var m map[string]int
		m["boom"]++
	})
	hooks.On(reg, "after", func(_ context.Context, e *hooks.Login) {
		if e.Result().Action != hooks.Continue {
			panic("the panicking handler's result leaked")
		}
	})
	var logs testutil.SyncBuffer
	met := &metrics{}
	d := hookstest.New(t, hooks.Options{Handlers: reg, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Metrics: met})
	for i := range 3 {
		res := hooks.Fire(d, context.Background(), &hooks.Login{Connection: conn(uint64(i)), Profile: hooks.Profile{Name: "alice"}})
		if res.Action != hooks.Continue {
			t.Fatalf("result = %+v, want continue (the panicking handler is skipped)", res)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "handler=buggy") || !strings.Contains(out, "failure=panic") || !strings.Contains(out, "assignment to entry in nil map") || !strings.Contains(out, "stack=") {
		t.Errorf("log does not name the handler, the panic and its stack:\n%s", out)
	}
	if n := strings.Count(out, "handler=buggy"); n != 1 {
		t.Errorf("three panics logged %d times; want once (throttled)", n)
	}
	if got := met.handlerFailures(); len(got) != 3 || got[0] != "buggy/login/panic" {
		t.Errorf("metrics = %v, want three buggy/login/panic", got)
	}
}

func TestGameProfileRequestChangesTheProfile(t *testing.T) {
	reg := hooks.NewRegistry()
	hooks.On(reg, "rename", func(_ context.Context, e *hooks.GameProfileRequest) {
		e.Profile.Name = "Alice_" + e.Profile.Name[:1]
		e.Profile.UUID = "069a79f4-44e9-4726-a5be-fca90e38aaf5"
		e.Profile.Properties[0].Value = "changed"
	})
	hooks.On(reg, "breaker", func(_ context.Context, e *hooks.GameProfileRequest) {
		if e.Profile.Name == "Alice_b" {
			e.Profile.UUID = "not-a-uuid"
		}
	})
	d := hookstest.New(t, hooks.Options{Handlers: reg})
	props := []hooks.Property{{Name: "textures", Value: "orig", Signature: "sig"}}
	ev := &hooks.GameProfileRequest{Connection: conn(1), Profile: hooks.Profile{Name: "alice", Properties: props}, OnlineMode: true}
	hooks.Fire(d, context.Background(), ev)
	if ev.Profile.Name != "Alice_a" || ev.Profile.UUID != "069a79f4-44e9-4726-a5be-fca90e38aaf5" || ev.Profile.Properties[0].Value != "changed" {
		t.Errorf("profile = %+v, want the handler's", ev.Profile)
	}
	if props[0].Value != "orig" {
		t.Errorf("the caller's properties were edited in place: %+v", props)
	}
	// An invalid profile is refused and the previous one stays.
	ev = &hooks.GameProfileRequest{Connection: conn(2), Profile: hooks.Profile{Name: "bob", Properties: props}}
	hooks.Fire(d, context.Background(), ev)
	if ev.Profile.Name != "Alice_b" || ev.Profile.UUID != "069a79f4-44e9-4726-a5be-fca90e38aaf5" {
		t.Errorf("profile = %+v, want the first handler's (the second set a bad UUID)", ev.Profile)
	}
}

// TestDecidingWebhook is the scenario at the dispatcher: a signed deciding
// webhook denies one username and redirects another to a second server.
func TestDecidingWebhook(t *testing.T) {
	const secret = "s3cret-webhook-key"
	wh := hookstest.NewWebhookServer(t, secret)
	wh.Deny("griefer", "§cYou are not welcome here")
	wh.Redirect("vip", "lobby-vip")
	d := hookstest.New(t, hooks.Options{Webhooks: []config.Webhook{{
		URL: wh.URL, Secret: secret, Decide: true, Events: []string{"pre_login", "server_pre_connect"},
	}}})
	ctx := context.Background()

	if res := hooks.Fire(d, ctx, &hooks.PreLogin{Connection: conn(1), Server: "lobby", Username: "griefer"}); !res.Denied() || res.Reason != "§cYou are not welcome here" || res.By != wh.URL {
		t.Errorf("griefer: %+v, want denied with the webhook's reason", res)
	}
	if res := hooks.Fire(d, ctx, &hooks.PreLogin{Connection: conn(2), Server: "lobby", Username: "vip"}); res.Action != hooks.Continue {
		t.Errorf("vip pre_login: %+v, want continue (redirect is not allowed on pre_login)", res)
	}
	ev := &hooks.ServerPreConnect{Connection: conn(2), Server: "lobby", Profile: hooks.Profile{Name: "vip"}}
	if res := hooks.Fire(d, ctx, ev); !res.Redirected() || res.Server != "lobby-vip" {
		t.Errorf("vip server_pre_connect: %+v, want redirect to lobby-vip", res)
	}
	if res := hooks.Fire(d, ctx, &hooks.PreLogin{Connection: conn(3), Server: "lobby", Username: "alice"}); res.Action != hooks.Continue {
		t.Errorf("alice: %+v, want continue", res)
	}

	got := wh.Deliveries()
	if len(got) != 4 {
		t.Fatalf("%d deliveries, want 4", len(got))
	}
	for _, dl := range got {
		if !dl.Signed {
			t.Errorf("delivery %s not signed correctly", dl.ID)
		}
		// The signature is plain HMAC-SHA256 of the body, as docs/events.md says.
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(dl.Body)
		if want := "sha256=" + hex.EncodeToString(m.Sum(nil)); dl.Header.Get("X-Infrarust-Signature-256") != want {
			t.Errorf("signature header %q, want %q", dl.Header.Get("X-Infrarust-Signature-256"), want)
		}
	}
	first := got[0]
	if first.Event != "pre_login" || first.Envelope.Event != "pre_login" || first.Player != "griefer" || first.ID == "" || first.ID != first.Envelope.ID {
		t.Errorf("first delivery = %+v", first)
	}
	data := first.Envelope.Data.(map[string]any)
	c := data["connection"].(map[string]any)
	if c["client_ip"] != "192.0.2.7" || c["host"] != "play.example.com" || c["proxy_mode"] != "passthrough" || data["server"] != "lobby" {
		t.Errorf("payload data = %v", data)
	}
	if got[1].Envelope.Seq <= first.Envelope.Seq {
		t.Errorf("seq does not grow: %d then %d", first.Envelope.Seq, got[1].Envelope.Seq)
	}
}

func TestDecidingWebhookFailures(t *testing.T) {
	refused := refusedURL(t)
	slow := hookstest.NewWebhookServer(t, "")
	slow.Hang()
	broken := hookstest.NewWebhookServer(t, "")
	broken.Fail(http.StatusInternalServerError)
	garbage := hookstest.NewWebhookServer(t, "")
	garbage.Answer("alice", webhook.Verdict{Action: "explode"})
	wrongAction := hookstest.NewWebhookServer(t, "")
	wrongAction.Answer("alice", webhook.Verdict{Action: "limbo"})

	cases := []struct {
		name, url, onError string
		wantDeny           bool
	}{
		{"refused, allow", refused, "allow", false},
		{"refused, deny", refused, "deny", true},
		{"slow, deny", slow.URL, "deny", true},
		{"slow, allow", slow.URL, "allow", false},
		{"500, deny", broken.URL, "deny", true},
		{"unknown action, deny", garbage.URL, "deny", true},
		{"action the event does not allow", wrongAction.URL, "deny", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			met := &metrics{}
			d := hookstest.New(t, hooks.Options{Metrics: met, Webhooks: []config.Webhook{{
				URL: c.url, Decide: true, OnError: c.onError, Events: []string{"login"}, Timeout: config.Duration(100 * time.Millisecond),
			}}})
			res := hooks.Fire(d, context.Background(), &hooks.Login{Connection: conn(1), Profile: hooks.Profile{Name: "alice"}})
			if res.Denied() != c.wantDeny {
				t.Fatalf("result = %+v, want denied=%v", res, c.wantDeny)
			}
			if c.wantDeny && (res.Reason == "" || res.By != c.url) {
				t.Errorf("a denial on error must say why and by whom: %+v", res)
			}
			if c.name != "action the event does not allow" && len(met.webhook) != 1 {
				t.Errorf("webhook failures counted %v, want one", met.webhook)
			}
		})
	}
}

// TestNotifyingWebhookNeverSlowsDispatch: a notifying webhook that hangs (or is
// down) while 200 logins fire events. Fire must return every time without waiting
// for it (a Fire that waited would deadlock this test: the endpoint only answers
// after all 200), and the queue stays within queue_size, the rest counted as dropped.
func TestNotifyingWebhookNeverSlowsDispatch(t *testing.T) {
	const queue, workers, logins = 16, 2, 200
	for _, mode := range []string{"hanging", "down"} {
		t.Run(mode, func(t *testing.T) {
			url := refusedURL(t)
			var wh *hookstest.WebhookServer
			if mode == "hanging" {
				wh = hookstest.NewWebhookServer(t, "")
				wh.Hang()
				url = wh.URL
			}
			met := &metrics{}
			d := hookstest.New(t, hooks.Options{
				Metrics: met, WebhookWorkers: workers,
				WebhookSleep: func(context.Context, time.Duration) error { return nil },
				Webhooks:     []config.Webhook{{URL: url, Events: []string{"post_login", "disconnect"}, QueueSize: queue, Attempts: 3, Timeout: config.Duration(time.Minute)}},
			})
			for i := range logins {
				res := hooks.Fire(d, context.Background(), &hooks.PostLogin{Connection: conn(uint64(i)), Profile: hooks.Profile{Name: "p"}})
				if res.Action != hooks.Continue {
					t.Fatalf("post_login %d: %+v", i, res)
				}
				if s := d.WebhookStats()[url]; s.Queued > queue {
					t.Fatalf("queue holds %d events, more than queue_size %d", s.Queued, queue)
				}
			}
			s := d.WebhookStats()[url]
			if mode == "hanging" {
				// At most queue_size waiting plus one in the hands of each worker.
				if accepted := uint64(logins) - s.Dropped; accepted > queue+workers {
					t.Errorf("%d events accepted while the endpoint hung; at most %d fit", accepted, queue+workers)
				}
				if int64(s.Dropped) != met.dropped.Load() || s.Dropped < logins-queue-workers {
					t.Errorf("dropped %d (metric %d), want at least %d", s.Dropped, met.dropped.Load(), logins-queue-workers)
				}
				wh.Release()
			}
			if err := d.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			s = d.WebhookStats()[url]
			if s.Delivered+s.Failed+s.Dropped != logins || s.Queued != 0 {
				t.Errorf("after close: %+v; every event must be delivered, failed or dropped, once", s)
			}
			if mode == "hanging" && s.Delivered != uint64(logins)-s.Dropped {
				t.Errorf("released endpoint: delivered %d of the %d accepted", s.Delivered, uint64(logins)-s.Dropped)
			}
			if mode == "down" && (s.Delivered != 0 || s.Retried == 0) {
				t.Errorf("dead endpoint: %+v, want nothing delivered and retries made", s)
			}
		})
	}
}

func TestNotificationCarriesTheDecision(t *testing.T) {
	wh := hookstest.NewWebhookServer(t, "k")
	reg := hooks.NewRegistry()
	hooks.On(reg, "gate", func(_ context.Context, e *hooks.PreLogin) { e.Deny("closed") })
	d := hookstest.New(t, hooks.Options{Handlers: reg, Webhooks: []config.Webhook{{URL: wh.URL, Secret: "k", Events: []string{"pre_login"}}}})
	arrived := wh.Arrived()
	hooks.Fire(d, context.Background(), &hooks.PreLogin{Connection: conn(9), Username: "bob"})
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("notification never arrived")
	}
	dl := wh.Deliveries()[0]
	var env struct {
		Result webhook.Verdict `json:"result"`
	}
	if err := json.Unmarshal(dl.Body, &env); err != nil {
		t.Fatal(err)
	}
	if !dl.Signed || env.Result.Action != "deny" || env.Result.Reason != "closed" || dl.Player != "bob" {
		t.Errorf("notification = %s (signed %v)", dl.Body, dl.Signed)
	}
}

func TestNewRefusesUndecidableEvents(t *testing.T) {
	_, err := hooks.New(hooks.Options{Webhooks: []config.Webhook{{URL: "http://127.0.0.1:1/", Decide: true, Events: []string{"disconnect"}}}})
	if err == nil || !strings.Contains(err.Error(), `"disconnect" cannot be decided`) {
		t.Fatalf("err = %v", err)
	}
	_, err = hooks.New(hooks.Options{Webhooks: []config.Webhook{{URL: "http://127.0.0.1:1/", Events: []string{"joined"}}}})
	if err == nil || !strings.Contains(err.Error(), `unknown event "joined"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestNilDispatcherRunsNothing(t *testing.T) {
	var d *hooks.Dispatcher
	ev := &hooks.PreLogin{Username: "alice"}
	if res := hooks.Fire(d, context.Background(), ev); res != (hooks.Result{}) || d.Wants(hooks.KindPreLogin) || d.NextConnection() != 0 {
		t.Fatalf("nil dispatcher did something: %+v", res)
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestKindsAndActions(t *testing.T) {
	names := []string{}
	for _, k := range hooks.Kinds() {
		names = append(names, k.String())
		back, ok := hooks.ParseKind(k.String())
		if !ok || back != k {
			t.Errorf("ParseKind(%q) = %v %v", k, back, ok)
		}
	}
	if strings.Join(names, ",") != strings.Join(config.WebhookEvents, ",") {
		t.Errorf("hooks kinds %v differ from config.WebhookEvents %v", names, config.WebhookEvents)
	}
	var decidable []string
	for _, k := range hooks.Kinds() {
		if k.Decides() {
			decidable = append(decidable, k.String())
		}
	}
	if strings.Join(decidable, ",") != strings.Join(config.DecidableEvents, ",") {
		t.Errorf("decidable kinds %v differ from config.DecidableEvents %v", decidable, config.DecidableEvents)
	}
	if hooks.KindPreLogin.Allows(hooks.Redirect) || !hooks.KindKickedFromServer.Allows(hooks.Limbo) || hooks.KindServerPreConnect.Allows(hooks.Limbo) {
		t.Error("allowed actions are wrong")
	}
}

// refusedURL is an http URL on a loopback port that refuses connections.
func refusedURL(t *testing.T) string {
	t.Helper()
	return "http://" + testutil.RefusedAddr(t) + "/hook"
}

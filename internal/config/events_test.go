package config

import (
	"strings"
	"testing"
	"time"
)

func TestWebhooksAndTelemetryLoad(t *testing.T) {
	src := `
[[webhooks]]
url = "https://hooks.example.com/a"
events = ["pre_login", "login"]
decide = true
on_error = "deny"
timeout = "500ms"

[[webhooks]]
url = "http://127.0.0.1:9000/b"
events = ["disconnect"]

[telemetry]
enabled = true
endpoint = "http://127.0.0.1:4318"
sample_ratio = 0.25
headers = { "x-api-key" = "k" }
`
	cfg, err := Parse([]byte(src), "f.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Webhooks) != 2 {
		t.Fatalf("webhooks = %d, want 2", len(cfg.Webhooks))
	}
	a, b := cfg.Webhooks[0], cfg.Webhooks[1]
	if !a.Decide || a.OnError != "deny" || a.Timeout.D() != 500*time.Millisecond || a.Attempts != DefaultWebhookAttempts {
		t.Errorf("first webhook = %+v", a)
	}
	// Left out: every default filled, so the dispatcher never sees a zero.
	if b.Decide || b.OnError != "allow" || b.Timeout.D() != DefaultWebhookTimeout || b.QueueSize != DefaultWebhookQueueSize || b.Attempts != DefaultWebhookAttempts {
		t.Errorf("second webhook defaults = %+v", b)
	}
	tl := cfg.Telemetry
	if !tl.Enabled || tl.SampleRatio != 0.25 || tl.ServiceName != "infrarust" || tl.Headers["x-api-key"] != "k" || tl.Timeout.D() != 10*time.Second {
		t.Errorf("telemetry = %+v", tl)
	}
	if d := Default(); d.Telemetry.Enabled || len(d.Webhooks) != 0 {
		t.Errorf("default config has tracing or webhooks on: %+v %+v", d.Telemetry, d.Webhooks)
	}
}

func TestWebhooksAndTelemetryErrors(t *testing.T) {
	hook := func(extra string) string {
		return "[[webhooks]]\nurl = \"http://h/x\"\nevents = [\"login\"]\n" + extra
	}
	cases := []struct {
		name, src, want string
	}{
		{"no url", "[[webhooks]]\nevents = [\"login\"]\n", `webhooks[0].url: "" is not an http(s) URL`},
		{"ftp url", "[[webhooks]]\nurl = \"ftp://h/x\"\nevents = [\"login\"]\n", `webhooks[0].url: "ftp://h/x" is not an http(s) URL`},
		{"no events", "[[webhooks]]\nurl = \"http://h/x\"\n", "webhooks[0].events: list at least one event"},
		{"unknown event", "[[webhooks]]\nurl = \"http://h/x\"\nevents = [\"login\", \"join\"]\n", `webhooks[0].events[1]: "join" is not an event`},
		{"bad on_error", hook("on_error = \"maybe\"\n"), `webhooks[0].on_error: "maybe" is not one of allow, deny`},
		{"huge queue", hook("queue_size = 99999999\n"), "webhooks[0].queue_size: must be between 1 and"},
		{"negative attempts", hook("attempts = -1\n"), "webhooks[0].attempts: must be 1 or more"},
		{"unknown key", hook("retry = 3\n"), `unknown key "webhooks[0].retry"`},
		{"bad endpoint", "[telemetry]\nenabled = true\nendpoint = \"localhost:4317\"\n", "telemetry.endpoint:"},
		{"ratio", "[telemetry]\nenabled = true\nsample_ratio = 2.0\n", "telemetry.sample_ratio: must be between 0 and 1"},
		{"off is not checked", "[telemetry]\nendpoint = \"nonsense\"\n", "-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src), "f.toml")
			switch {
			case c.want == "-":
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
			case err == nil || !strings.Contains(err.Error(), c.want):
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestDecidingWebhookRefusesNotifications(t *testing.T) {
	src := "[[webhooks]]\nurl = \"http://h/x\"\ndecide = true\nevents = [\"login\", \"post_login\"]\n"
	_, err := Parse([]byte(src), "f.toml")
	if err == nil || !strings.Contains(err.Error(), `webhooks[0].events[1]: "post_login" cannot be decided`) {
		t.Fatalf("error = %v", err)
	}
}

package config

import (
	"slices"
	"testing"
)

// Fingerprint names every key whose value differs, says which need a
// restart, never digests a credential, and HoldRestartKeys keeps the running
// value of those.
func TestFingerprintAndHeldKeys(t *testing.T) {
	a, b := Default(), Default()
	b.Commands.Server.Aliases = []string{"hub"}
	b.Bind = "0.0.0.0:25566"
	b.Web.APIKey = "another-key-another-key-another-key"
	b.Webhooks = []Webhook{{URL: "https://x.example/", Secret: "s3cret"}}
	fa, fb := Fingerprint(a), Fingerprint(b)
	got := Changed(fa, fb)
	if !slices.Equal(got, []string{"bind", "commands.server.aliases", "webhooks"}) {
		t.Fatalf("changed %v", got)
	}
	if fb["web.api_key"] != "secret" || (fb["forwarding.secret"] != "" && fb["forwarding.secret"] != "secret") {
		t.Error("a credential was digested")
	}
	c := Default()
	c.Webhooks = []Webhook{{URL: "https://x.example/", Secret: "other"}}
	if Changed(fb, Fingerprint(c)) != nil && slices.Contains(Changed(fb, Fingerprint(c)), "webhooks") {
		t.Error("a webhook's secret shows in its digest")
	}
	if !NeedsRestart("bind") || !NeedsRestart("web.bind") || !NeedsRestart("active_health.max_concurrent") || NeedsRestart("active_health.interval") || NeedsRestart("commands.server.aliases") {
		t.Error("NeedsRestart")
	}
	held := HoldRestartKeys(a, b)
	if !slices.Equal(held, []string{"bind"}) {
		t.Errorf("held %v", held)
	}
	if b.Bind != a.Bind || b.Web.APIKey != a.Web.APIKey || !slices.Equal(b.Commands.Server.Aliases, []string{"hub"}) {
		t.Errorf("after holding: bind %q key %q aliases %v", b.Bind, b.Web.APIKey, b.Commands.Server.Aliases)
	}
}

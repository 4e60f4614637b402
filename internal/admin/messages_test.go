package admin

import (
	"slices"
	"strings"
	"testing"
)

// The count by server and mode, a message to one player (a passthrough player
// cannot be told: 409), a broadcast (to one server's players, or all the proxy
// speaks to), and bad bodies answered 400 with what to send.
func TestPlayerMessageRoutes(t *testing.T) {
	env := newTestEnv(t)
	rt := env.rt
	status, _, body := env.call(t, "GET", "/api/v1/players/count", testKey, "")
	c := decodeData[PlayerCount](t, body)
	if status != 200 || c.Total != 2 || c.ByServer["lobby"] != 1 || c.ByServer["survival"] != 1 || c.ByMode["offline"] != 1 || c.ByMode["passthrough"] != 1 {
		t.Fatalf("count: %d %+v", status, c)
	}

	status, _, body = env.call(t, "GET", "/api/v1/players/NOTCH", testKey, "")
	if p := decodeData[Player](t, body); status != 200 || p.Name != "Notch" || p.Server != "lobby" {
		t.Fatalf("one player: %d %s", status, body)
	}
	if status, _, body = env.call(t, "GET", "/api/v1/players/Nobody", testKey, ""); status != 404 {
		t.Fatalf("one player who is not online: %d %s", status, body)
	}
	status, _, body = env.call(t, "POST", "/api/v1/players/notch/message", testKey, `{"message":"§ahello"}`)
	if m := decodeData[MessageResult](t, body); status != 200 || m.Player.Name != "Notch" || m.Message != "§ahello" {
		t.Fatalf("message: %d %s", status, body)
	}
	status, _, body = env.call(t, "POST", "/api/v1/players/jeb_/message", testKey, `{"message":"hi"}`)
	if e := decodeError(t, body); status != 409 || !strings.Contains(e.Message, "passthrough") {
		t.Fatalf("message to a passthrough player: %d %s", status, body)
	}
	status, _, body = env.call(t, "POST", "/api/v1/players/Nobody/message", testKey, `{"message":"hi"}`)
	if status != 404 {
		t.Fatalf("message to nobody: %d %s", status, body)
	}
	for _, bad := range []string{``, `{}`, `{"message":"  "}`, `{"message":"x","extra":1}`, `{"message":"` + strings.Repeat("x", MaxMessageLen+1) + `"}`, `{"message":"x","server":"lobby"}`} {
		if status, _, body = env.call(t, "POST", "/api/v1/players/Notch/message", testKey, bad); status != 400 {
			t.Fatalf("message %.40q: %d %s", bad, status, body)
		}
	}

	status, _, body = env.call(t, "POST", "/api/v1/players/broadcast", testKey, `{"message":"restart in 5 minutes","server":"lobby"}`)
	if b := decodeData[BroadcastResult](t, body); status != 200 || b.Sent != 1 {
		t.Fatalf("broadcast to lobby: %d %s", status, body)
	}
	status, _, body = env.call(t, "POST", "/api/v1/players/broadcast", testKey, `{"message":"x","server":"nowhere"}`)
	if status != 404 {
		t.Fatalf("broadcast to an unknown server: %d %s", status, body)
	}
	rt.mu.Lock()
	told := slices.Clone(rt.told)
	rt.mu.Unlock()
	if want := []string{"Notch: §ahello", "Notch: restart in 5 minutes"}; !slices.Equal(told, want) {
		t.Fatalf("told %q, want %q", told, want)
	}

	status, _, body = env.call(t, "GET", "/api/v1/proxy", testKey, "")
	if p := decodeData[ProxyInfo](t, body); status != 200 || p.Version != "test" || p.Servers != 2 || p.GoVersion == "" || !slices.Contains(p.Features, "bans") {
		t.Fatalf("proxy: %d %s", status, body)
	}
}

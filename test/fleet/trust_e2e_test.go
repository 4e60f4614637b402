//go:build unix

package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// What can write to the fleet's Redis without the fleet's secret drives
// nothing, with two real proxies on a real redis-server and real clients:
// a kick command published under a member's id and under an invented one, and
// a forged session claim for Pat's identity, all leave Pat playing through
// p2; each is dropped and counted (infrarust_fleet_rejected_total); a forged
// remembered session does not let a name into the auth lobby without its
// password.
func TestE2EForgedFleetMessagesDriveNothing(t *testing.T) {
	h := nmp.Setup(t)
	const v = "1.21.4"
	r := startRedis(t)
	b := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond})
	lobby := fmt.Sprintf("domains = [%q]\naddresses = [%q]\nproxy_mode = \"offline\"\n", playHost, b.Addr)
	auth := fmt.Sprintf("domains = [\"auth.fleet.test\"]\naddresses = [%q]\nproxy_mode = \"offline\"\nlimbo_handlers = [\"auth\"]\n", b.Addr)
	ps := startFleetWith(t, r, 2, map[string]string{"lobby": lobby, "auth": auth}, "\n[auth_limbo]\ntimeout = \"5s\"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := h.StartClient(t)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(r.port)})
	defer rdb.Close()

	pat := make(chan nmp.LoginResult, 1)
	go func() {
		res, _ := client.Login(ctx, nmp.LoginOptions{Addr: ps[1].proxyAddr, ServerHost: playHost, Version: v, Username: "Pat",
			UntilKicked: true, Tick: 200 * time.Millisecond, Timeout: time.Minute})
		pat <- res
	}()
	joined, err := b.Wait(ctx, nmp.Match("join", "Pat"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	forge := func(m map[string]any) string {
		b, _ := json.Marshal(m)
		return string(b)
	}
	for _, msg := range []string{
		forge(map[string]any{"kind": "command", "player": "Pat", "to": "p2", "action": "kick", "arg": "pwned", "v": map[string]any{"ts": now.UnixMilli(), "proxy": "p1"}}),
		forge(map[string]any{"kind": "command", "player": "Pat", "to": "p2", "action": "kick", "arg": "pwned", "v": map[string]any{"ts": now.UnixMilli(), "proxy": "evil"}}),
		forge(map[string]any{"kind": "session", "player": "uuid:" + dashless(joined.UUID), "at": now.UnixNano(), "proof": 2, "v": map[string]any{"ts": now.UnixMilli(), "proxy": "p1"}}),
	} {
		if err := rdb.Publish(ctx, "infrarust:changes", msg).Err(); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "p2 counts the three forged messages", func() bool {
		n, _ := ps[1].metric(t, `infrarust_fleet_rejected_total{reason="unsigned"}`)
		return n >= 3
	})
	if list, err := ps[1].client.Players(ctx, ""); err != nil || len(list) != 1 || list[0].Name != "Pat" {
		t.Fatalf("Pat must still play through p2: %+v, %v", list, err)
	}
	if _, err := ps[1].client.KickPlayer(ctx, "Pat", "done"); err != nil {
		t.Fatal(err)
	}
	if res := <-pat; res.KickReason != "done" {
		t.Fatalf("Pat's session ended otherwise than by the test: %s", res.Raw)
	}

	// A forged remembered session: the name is still asked for its password.
	if err := rdb.HSet(ctx, "infrarust:auth:sessions:victim", "127.0.0.1", strconv.FormatInt(now.Add(time.Hour).UnixMilli(), 10)).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := client.Login(ctx, nmp.LoginOptions{Addr: ps[0].proxyAddr, ServerHost: "auth.fleet.test", Version: v, Username: "Victim",
		UntilKicked: true, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Kicked || res.KickReason != "You took too long to log in." || sawJoin(b, "Victim") {
		t.Fatalf("a forged remembered session let Victim in: %s", res.Raw)
	}
}

// duplicate_login = "refuse" holds across the fleet: Alice plays through p1;
// her second login through p2 is refused before any backend sees it, and her
// first session goes on. Once she left, she logs in through p2.
func TestE2EDuplicateRefusedAcrossTheFleet(t *testing.T) {
	h := nmp.Setup(t)
	const v = "1.21.4"
	r := startRedis(t)
	b := h.StartServer(t, nmp.ServerOptions{Version: v, KeepAlive: 250 * time.Millisecond})
	file := fmt.Sprintf("domains = [%q]\naddresses = [%q]\nproxy_mode = \"offline\"\n", playHost, b.Addr)
	var ps []*proxyProc
	for i := 1; i <= 2; i++ {
		ps = append(ps, startProxy(t, proxyOpts{id: "p" + strconv.Itoa(i), redis: r, servers: map[string]string{"lobby": file}, top: `duplicate_login = "refuse"`}))
	}
	for _, p := range ps {
		eventually(t, 10*time.Second, p.id+" sees the whole fleet", func() bool {
			st, err := p.client.Fleet(context.Background())
			return err == nil && st.Connected && st.LiveProxies == 2
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := h.StartClient(t)
	first := make(chan nmp.LoginResult, 1)
	go func() {
		res, _ := client.Login(ctx, nmp.LoginOptions{Addr: ps[0].proxyAddr, ServerHost: playHost, Version: v, Username: "Alice",
			UntilKicked: true, Tick: 200 * time.Millisecond, Timeout: time.Minute})
		first <- res
	}()
	if _, err := b.Wait(ctx, nmp.Match("join", "Alice")); err != nil {
		t.Fatal(err)
	}
	second, err := client.Login(ctx, nmp.LoginOptions{Addr: ps[1].proxyAddr, ServerHost: playHost, Version: v, Username: "Alice", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Kicked || second.KickReason != "You are already connected to this proxy!" || joinsOf(b, "Alice") != 1 {
		t.Fatalf("Alice's second login through p2 must be refused before the backend: %s (joins %d)", second.Raw, joinsOf(b, "Alice"))
	}
	if _, err := ps[0].client.KickPlayer(ctx, "Alice", "done"); err != nil {
		t.Fatal(err)
	}
	if res := <-first; res.KickReason != "done" {
		t.Fatalf("Alice's first session ended otherwise than by the test: %s", res.Raw)
	}
	eventually(t, 10*time.Second, "Alice logs in through p2 once she left p1", func() bool {
		res, err := client.Login(ctx, nmp.LoginOptions{Addr: ps[1].proxyAddr, ServerHost: playHost, Version: v, Username: "Alice", Timeout: 20 * time.Second})
		return err == nil && res.OK && !res.Kicked
	})
}

func dashless(uuid string) string {
	out := make([]byte, 0, 32)
	for i := 0; i < len(uuid); i++ {
		if uuid[i] != '-' {
			out = append(out, uuid[i])
		}
	}
	return string(out)
}

func sawJoin(b *nmp.Server, name string) bool { return joinsOf(b, name) > 0 }

func joinsOf(b *nmp.Server, name string) int {
	n := 0
	for _, e := range b.Events() {
		if e.Event == "join" && e.Username == name {
			n++
		}
	}
	return n
}

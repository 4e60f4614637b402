package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// versions span the protocol eras a proxy carries: 1.8 (the long-lived PvP version),
// 1.12 (last before the 1.13 rewrite), 1.16 (new dimension codec), 1.19.4 (chat
// signing), 1.20.4 (configuration phase, NBT chat) and 1.21.4 (newest nmp speaks).
var versions = []string{"1.8.8", "1.12.2", "1.16.5", "1.19.4", "1.20.4", "1.21.4"}

// configState says whether a client of version v has the configuration phase
// (1.20.2+).
func configState(v string) bool {
	p, ok := mc.ParseVersion(v)
	return ok && p.AtLeast(mc.V1_20_2)
}

// echoSizes are the plugin messages sent through the proxy: sizes around the
// compression threshold (255/256/257) and up to the serverbound maximum (32767),
// about 300 KB in all, half random (incompressible) and half patterned.
var echoSizes = []int{1, 255, 256, 257, 4096, 32767, 32767, 32767, 32767, 32767, 32767, 32767, 32767, 32767}

// A real client logs in to a real server through the proxy for every version: status
// shows the backend's MOTD, ~300 KB of plugin messages echo byte-exact both ways with
// compression on, keep-alives flow, and the backend's kick and login refusal texts
// reach the client.
func TestRealClientThroughProxy(t *testing.T) {
	h := nmp.Setup(t)
	total := int64(0)
	for _, n := range echoSizes {
		total += int64(n)
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			domain := "mc-" + strings.ReplaceAll(v, ".", "-") + ".e2e.test"
			motd := "§aInfrarust e2e§r backend " + v
			kick := "§cKicked by the " + v + " backend"
			refuse := "Login refused by the " + v + " backend"
			srv := h.StartServer(t, nmp.ServerOptions{
				Version: v, MOTD: motd, MaxPlayers: 42,
				CompressionThreshold: 256, KeepAlive: 250 * time.Millisecond,
				Kick: kick, KickUsers: []string{"Kicked"},
				Refuse: refuse, RefuseUsers: []string{"Refused"},
			})
			proxyAddr := startProxy(t, passthrough(domain, srv.Addr))
			client := h.StartClient(t)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
			defer cancel()

			ping, err := client.Ping(ctx, nmp.PingOptions{Addr: proxyAddr, ServerHost: domain, Version: v})
			if err != nil {
				t.Fatal(err)
			}
			if !ping.OK || ping.MOTD != motd || ping.ServerProtocol != srv.Protocol || ping.PlayersMax != 42 {
				t.Errorf("status through the proxy: want MOTD %q, protocol %d, max 42; got %s", motd, srv.Protocol, ping.Raw)
			}

			echo, err := client.Login(ctx, nmp.LoginOptions{
				Addr: proxyAddr, ServerHost: domain, Version: v, Username: "Echo",
				Sizes: echoSizes, KeepAlives: 2, Timeout: 60 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if !echo.OK {
				t.Fatalf("login and echo through the proxy failed: %s", echo.Raw)
			}
			if echo.PayloadsEchoed != len(echoSizes) || echo.Mismatches != 0 ||
				echo.BytesSent != total || echo.BytesEchoed != total || echo.SentSHA256 != echo.EchoSHA256 {
				t.Errorf("plugin messages not echoed byte-exact (%d bytes sent): %s", total, echo.Raw)
			}
			if echo.CompressionThreshold != 256 || echo.KeepAlives < 2 {
				t.Errorf("want compression threshold 256 and 2 keep-alives answered: %s", echo.Raw)
			}
			login, err := srv.Wait(ctx, nmp.Match("login", "Echo"))
			if err != nil {
				t.Fatal(err)
			}
			if login.Host != domain || login.UUID != echo.UUID || login.Compression != 256 {
				t.Errorf("backend saw host %q uuid %q compression %d; want %q, the client's %q, 256",
					login.Host, login.UUID, login.Compression, domain, echo.UUID)
			}
			leave, err := srv.Wait(ctx, nmp.Match("leave", "Echo"))
			if err != nil {
				t.Fatal(err)
			}
			if leave.Payloads != len(echoSizes) || leave.PayloadBytes != total || leave.PayloadSHA256 != echo.SentSHA256 || leave.KeepAlives < 2 {
				t.Errorf("backend received %d payloads, %d bytes, sha256 %s, %d keep-alives; client sent %d, %d, %s, answered %d",
					leave.Payloads, leave.PayloadBytes, leave.PayloadSHA256, leave.KeepAlives,
					len(echoSizes), total, echo.SentSHA256, echo.KeepAlives)
			}

			kicked, err := client.Login(ctx, nmp.LoginOptions{Addr: proxyAddr, ServerHost: domain, Version: v, Username: "Kicked", UntilKicked: true})
			if err != nil {
				t.Fatal(err)
			}
			if !kicked.OK || kicked.KickReason != kick {
				t.Errorf("want the backend's kick %q after spawning: %s", kick, kicked.Raw)
			}

			refused, err := client.Login(ctx, nmp.LoginOptions{Addr: proxyAddr, ServerHost: domain, Version: v, Username: "Refused"})
			if err != nil {
				t.Fatal(err)
			}
			if refused.OK || !refused.Kicked || refused.KickReason != refuse || refused.PlayMS != nil {
				t.Errorf("want the backend's login refusal %q before spawning: %s", refuse, refused.Raw)
			}
			t.Logf("%s: %v wall; ping %d ms, echo login %d ms (spawned at %s, %d KB echoed), kick %d ms, refuse %d ms",
				v, time.Since(start).Round(10*time.Millisecond), ping.ElapsedMS, echo.ElapsedMS, msOrNil(echo.PlayMS),
				total>>10, kicked.ElapsedMS, refused.ElapsedMS)
		})
	}
}

// client.js logs in the online-mode way against a stand-in session server: it posts the
// join, the nmp server's hasJoined with the same server id succeeds, and the session
// is encrypted; a wrong token or a client that skips the join is turned away.
func TestOnlineLoginAgainstSessionStandIn(t *testing.T) {
	h := nmp.Setup(t)
	cases := []struct {
		version string
		full    bool // also the refusals and a pass through the proxy
	}{
		{"1.8.8", false},
		{"1.21.4", true},
	}
	for _, c := range cases {
		t.Run(c.version, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
			defer cancel()
			ss := nmp.StartSessionServer(t)
			token, profile := ss.AddProfile("OnlineGopher")
			srv := h.StartServer(t, nmp.ServerOptions{Version: c.version, OnlineMode: true, SessionServer: ss.URL, KeepAlive: 250 * time.Millisecond})
			client := h.StartClient(t)
			online := &nmp.OnlineLogin{SessionServer: ss.URL, AccessToken: token, ProfileID: profile.ID}
			wantUUID := dashed(profile.ID)

			res, err := client.Login(ctx, nmp.LoginOptions{Addr: srv.Addr, Version: c.version, Username: "OnlineGopher", Online: online, Sizes: []int{1, 300, 20000}, KeepAlives: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK || !res.Encrypted || res.UUID != wantUUID || res.Mismatches != 0 {
				t.Fatalf("online login: want OK, encrypted, uuid %s: %s", wantUUID, res.Raw)
			}
			login, err := srv.Wait(ctx, nmp.Match("login", "OnlineGopher"))
			if err != nil {
				t.Fatal(err)
			}
			if !login.Online || login.UUID != wantUUID {
				t.Errorf("backend logged in %s as %q online=%v; want the session server's %s", login.Username, login.UUID, login.Online, wantUUID)
			}
			calls := ss.Calls()
			if len(calls) != 2 || calls[0].Kind != "join" || !calls[0].OK || calls[1].Kind != "hasJoined" || !calls[1].OK ||
				calls[0].ServerID != calls[1].ServerID || calls[1].Username != "OnlineGopher" {
				t.Fatalf("want an accepted join then a hasJoined with the same server id; got %+v", calls)
			}
			if !c.full {
				return
			}

			bad, err := client.Login(ctx, nmp.LoginOptions{Addr: srv.Addr, Version: c.version, Username: "OnlineGopher",
				Online: &nmp.OnlineLogin{SessionServer: ss.URL, AccessToken: "not-" + token, ProfileID: profile.ID}})
			if err != nil {
				t.Fatal(err)
			}
			if bad.OK || !strings.Contains(bad.Error, "Invalid token") {
				t.Errorf("a wrong access token must fail at the join: %s", bad.Raw)
			}

			skipped, err := client.Login(ctx, nmp.LoginOptions{Addr: srv.Addr, Version: c.version, Username: "NoJoin"})
			if err != nil {
				t.Fatal(err)
			}
			if skipped.OK || !skipped.Kicked || !strings.Contains(skipped.KickReason, "Failed to verify username") {
				t.Errorf("a client that skips the join must be refused by the online server: %s", skipped.Raw)
			}
			last := ss.Calls()[len(ss.Calls())-1]
			if last.Kind != "hasJoined" || last.OK || last.Username != "NoJoin" {
				t.Errorf("want a failed hasJoined for NoJoin last; got %+v", last)
			}

			domain := "online.e2e.test"
			via, err := client.Login(ctx, nmp.LoginOptions{Addr: startProxy(t, passthrough(domain, srv.Addr)), ServerHost: domain,
				Version: c.version, Username: "OnlineGopher", Online: online, Sizes: []int{5000}})
			if err != nil {
				t.Fatal(err)
			}
			if !via.OK || !via.Encrypted || via.UUID != wantUUID {
				t.Errorf("online login through the passthrough proxy: %s", via.Raw)
			}
		})
	}
}

// dashed writes a 32-hex-digit UUID in its 8-4-4-4-12 form.
func dashed(id string) string {
	return id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:]
}

func msOrNil(p *int) string {
	if p == nil {
		return "never"
	}
	return time.Duration(*p * int(time.Millisecond)).String()
}

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/auth"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/testutil/nmp"
)

// intercepted is a server in an intercepted mode (offline or client_only) that
// routes domain to addr.
func intercepted(mode config.ProxyMode, domain, addr string) *config.Server {
	s := passthrough(domain, addr)
	s.ProxyMode = mode
	return s
}

// A real client logs in through the proxy in both intercepted modes, for every
// version: the proxy finishes the login itself (with a Mojang stand-in for
// client_only), logs in to a real offline-mode server, and relays frames with
// compression on both sides: ~300 KB of plugin messages echo byte-exact, keep-alives
// flow, and the backend's kick and login refusal reach the client.
func TestRealClientIntercepted(t *testing.T) {
	h := nmp.Setup(t)
	total := int64(0)
	for _, n := range echoSizes {
		total += int64(n)
	}
	for _, mode := range []config.ProxyMode{config.ModeOffline, config.ModeClientOnly} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			for _, v := range versions {
				t.Run(v, func(t *testing.T) {
					t.Parallel()
					domain := "i-" + strings.ReplaceAll(v, ".", "-") + ".e2e.test"
					kick := "§cKicked by the " + v + " backend"
					refuse := "Login refused by the " + v + " backend"
					srv := h.StartServer(t, nmp.ServerOptions{
						Version: v, MOTD: "intercepted " + v, MaxPlayers: 7,
						CompressionThreshold: 256, KeepAlive: 250 * time.Millisecond,
						Kick: kick, KickUsers: []string{"Kicked"},
						Refuse: refuse, RefuseUsers: []string{"Refused"},
					})
					var online func(name string) *nmp.OnlineLogin
					var ss *nmp.SessionServer
					var proxyAddr string
					if mode == config.ModeClientOnly {
						ss = nmp.StartSessionServer(t)
						online = func(name string) *nmp.OnlineLogin {
							token, profile := ss.AddProfile(name)
							return &nmp.OnlineLogin{SessionServer: ss.URL, AccessToken: token, ProfileID: profile.ID}
						}
						proxyAddr = startProxyWith(t, func(c *config.Config) { c.Auth.SessionServer = ss.URL }, intercepted(mode, domain, srv.Addr))
					} else {
						online = func(string) *nmp.OnlineLogin { return nil }
						proxyAddr = startProxy(t, intercepted(mode, domain, srv.Addr))
					}
					client := h.StartClient(t)
					ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
					defer cancel()

					echo, err := client.Login(ctx, nmp.LoginOptions{
						Addr: proxyAddr, ServerHost: domain, Version: v, Username: "Echo", Online: online("Echo"),
						Sizes: echoSizes, KeepAlives: 2, Timeout: 60 * time.Second, ClientInfo: true,
					})
					if err != nil {
						t.Fatal(err)
					}
					if !echo.OK {
						t.Fatalf("login and echo through the %s proxy failed: %s", mode, echo.Raw)
					}
					if echo.PayloadsEchoed != len(echoSizes) || echo.Mismatches != 0 ||
						echo.BytesSent != total || echo.BytesEchoed != total || echo.SentSHA256 != echo.EchoSHA256 {
						t.Errorf("plugin messages not echoed byte-exact (%d bytes sent): %s", total, echo.Raw)
					}
					if echo.CompressionThreshold != 256 || echo.KeepAlives < 2 {
						t.Errorf("want compression threshold 256 and 2 keep-alives answered: %s", echo.Raw)
					}
					if mode == config.ModeClientOnly && !echo.Encrypted {
						t.Errorf("a client_only session must be encrypted: %s", echo.Raw)
					}
					offline := auth.OfflineUUID("Echo").String()
					login, err := srv.Wait(ctx, nmp.Match("login", "Echo"))
					if err != nil {
						t.Fatal(err)
					}
					// Without forwarding the offline-mode backend knows the player by the
					// offline UUID; the client gets the proxy's identity (Mojang's in client_only).
					if login.Host != domain || login.UUID != offline || login.Compression != 256 {
						t.Errorf("backend saw host %q uuid %q compression %d; want %q, %q, 256", login.Host, login.UUID, login.Compression, domain, offline)
					}
					if mode == config.ModeOffline && echo.UUID != offline {
						t.Errorf("offline mode: the client's UUID is %q, want the offline UUID %q", echo.UUID, offline)
					}
					if mode == config.ModeClientOnly {
						calls := ss.Calls()
						if len(calls) < 2 || calls[len(calls)-1].Kind != "hasJoined" || !calls[len(calls)-1].OK {
							t.Errorf("client_only must confirm the player with hasJoined: %+v", calls)
						}
						if echo.UUID == offline {
							t.Errorf("client_only gave the client the offline UUID; want the session server's")
						}
					}
					// 1.20.2+: the client's brand and Client Information came right after its
					// Login Acknowledged, and the proxy's own ack to the backend went out with
					// them (session.BackendLogin.AckLater); the backend has them in configuration.
					if configState(v) {
						info, err := srv.Wait(ctx, nmp.Match("client_information", "Echo"))
						if err != nil {
							t.Fatal(err)
						}
						if info.Stage != "configuration" || info.Text != "en_us" {
							t.Errorf("backend got the client information in %q with locale %q; want configuration, en_us", info.Stage, info.Text)
						}
					}
					leave, err := srv.Wait(ctx, nmp.Match("leave", "Echo"))
					if err != nil {
						t.Fatal(err)
					}
					if leave.Payloads != len(echoSizes) || leave.PayloadBytes != total || leave.PayloadSHA256 != echo.SentSHA256 {
						t.Errorf("backend received %d payloads, %d bytes, sha256 %s; client sent %d, %d, %s",
							leave.Payloads, leave.PayloadBytes, leave.PayloadSHA256, len(echoSizes), total, echo.SentSHA256)
					}

					kicked, err := client.Login(ctx, nmp.LoginOptions{Addr: proxyAddr, ServerHost: domain, Version: v, Username: "Kicked", Online: online("Kicked"), UntilKicked: true})
					if err != nil {
						t.Fatal(err)
					}
					if !kicked.OK || kicked.KickReason != kick {
						t.Errorf("want the backend's kick %q after spawning: %s", kick, kicked.Raw)
					}
					refused, err := client.Login(ctx, nmp.LoginOptions{Addr: proxyAddr, ServerHost: domain, Version: v, Username: "Refused", Online: online("Refused")})
					if err != nil {
						t.Fatal(err)
					}
					if refused.OK || !refused.Kicked || refused.KickReason != refuse {
						t.Errorf("want the backend's login refusal %q: %s", refuse, refused.Raw)
					}
				})
			}
		})
	}
}

package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/fakemc"
	"github.com/infrarust-go/infrarust/internal/mc"
)

const fleetTestKey = "fleet-test-key-0123456789"

// startFleetApp runs one proxy of a fleet meeting in mr.
func startFleetApp(t *testing.T, mr *miniredis.Miniredis, id string, files map[string]string) (*testApp, *admin.Client) {
	t.Helper()
	a := startApp(t, files, func(c *config.Config) {
		c.Web.APIKey = fleetTestKey
		c.Fleet.Redis = "redis://" + mr.Addr()
		c.Fleet.ID = id
		c.Fleet.HeartbeatInterval = config.Duration(100 * time.Millisecond)
		c.Fleet.HeartbeatTimeout = config.Duration(time.Second)
	})
	return a, admin.NewClient(a.adminAddr, fleetTestKey)
}

// holdingBackend answers a login with a non-disconnect frame and then echoes,
// so the player stays online.
func holdingBackend(t *testing.T, name string) *fakemc.Server {
	t.Helper()
	b, err := fakemc.Start("127.0.0.1:0", fakemc.Options{Name: name, OnLogin: func(c net.Conn, br *bufio.Reader, _ mc.Handshake, _ mc.LoginStart) {
		if _, err := c.Write(mc.AppendFrame(nil, 0x02, make([]byte, 17))); err != nil {
			return
		}
		_, _ = io.Copy(c, br)
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// login sends a handshake and login start for host and returns the connection
// and the first frame.
func login(t *testing.T, proxyAddr, host, name string) (net.Conn, mc.Frame) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxyAddr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	out := mc.Handshake{ProtocolVersion: 767, ServerAddress: host, ServerPort: 25565, NextState: mc.StateLogin}.Encode()
	out = append(out, mc.LoginStart{Name: name, HasUUID: true}.Encode(767)...)
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	f, err := mc.ReadFrame(bufio.NewReader(c), mc.MaxFrameSize)
	if err != nil {
		c.Close()
		t.Fatalf("login %s: %v", name, err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, f
}

// Two proxies of one fleet, wired the way serve wires them: a drain and a ban
// made through one's admin API apply on the other, each lists the other's
// players, and the fleet view and metrics show both.
func TestFleetWiring(t *testing.T) {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	b1, b2 := holdingBackend(t, "one"), holdingBackend(t, "two")
	files := map[string]string{"lobby.toml": fmt.Sprintf("domains = [\"play.test\"]\naddresses = [%q, %q]\n", b1.Addr(), b2.Addr())}
	a, ca := startFleetApp(t, mr, "a", files)
	b, cb := startFleetApp(t, mr, "b", files)
	ctx := context.Background()

	res, err := ca.Drain(ctx, "lobby", b1.Addr())
	if err != nil || res.Fleet == nil || !res.Fleet.Shared() {
		t.Fatalf("drain on a: %+v %v", res.Fleet, err)
	}
	eventually(t, "b shows the drain", func() bool {
		bs, err := cb.Backends(ctx, "lobby")
		return err == nil && bs.Backends[0].State == "draining"
	})
	if !b.drains.Drained("lobby", b1.Addr()) {
		t.Fatal("b applied the drain but did not store it (it would not survive b's restart)")
	}

	if _, err := cb.AddBan(ctx, admin.BanRequest{Type: "username", Value: "Griefer", Reason: "grief"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a refuses the banned player", func() bool {
		c, f := login(t, a.proxyAddr, "play.test", "Griefer")
		defer c.Close()
		text, ok := mc.ParseLoginDisconnect(f)
		return ok && strings.Contains(text, "grief")
	})

	// One player on each proxy; the fleet lists both, with their proxy.
	pa, _ := login(t, a.proxyAddr, "play.test", "Alice")
	defer pa.Close()
	pb, _ := login(t, b.proxyAddr, "play.test", "Bob")
	defer pb.Close()
	eventually(t, "a lists the fleet's players", func() bool {
		list, err := ca.FleetPlayers(ctx, "")
		return err == nil && len(list) == 2 && list[0].Name == "Alice" && list[0].Proxy == "a" && list[1].Proxy == "b"
	})
	eventually(t, "the fleet-wide count", func() bool { return a.fleet.OnlineCount("lobby") == 2 })
	// Eventually: on a loaded machine a heartbeat can miss its one-second
	// timeout and a proxy leave the view for a moment before it is back.
	var last string
	defer func() {
		if t.Failed() {
			t.Logf("fleet view from b, last asked: %s", last)
		}
	}()
	eventually(t, "b's fleet view shows both proxies", func() bool {
		st, err := cb.Fleet(ctx)
		last = fmt.Sprintf("%+v %v", st, err)
		return err == nil && st.Enabled && st.Connected && st.LiveProxies == 2 && len(st.Proxies) == 2 && st.Proxies[0].Address == a.proxyAddr
	})
	eventually(t, "a's metrics show the fleet", func() bool {
		body := scrapeAdmin(t, a.adminAddr)
		return strings.Contains(body, "infrarust_fleet_connected 1") && strings.Contains(body, "infrarust_fleet_proxies 2")
	})
}

func scrapeAdmin(t *testing.T, adminAddr string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+adminAddr+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+fleetTestKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

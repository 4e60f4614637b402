package proxy

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/Tnze/go-mc/bot"
	"github.com/Tnze/go-mc/chat"

	"github.com/infrarust-go/infrarust/internal/fakemc"
)

// A third-party client library (Tnze/go-mc) pings and logs in through the proxy.
func TestThirdPartyClient(t *testing.T) {
	b := startBackend(t, fakemc.Options{Name: "go-mc-backend", MOTD: "hello go-mc", Online: 4, Max: 50})
	tp := startProxy(t, nil, newServer("lobby", []string{"127.0.0.1"}, b.Addr()))
	_, port, _ := net.SplitHostPort(tp.addr)

	resp, delay, err := bot.PingAndListTimeout("127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		t.Fatalf("go-mc ping through the proxy: %v", err)
	}
	if !strings.Contains(string(resp), "hello go-mc") || !strings.Contains(string(resp), `"online":4`) {
		t.Fatalf("go-mc saw %s", resp)
	}
	if delay <= 0 {
		t.Fatalf("no latency measured")
	}

	c := bot.NewClient()
	c.Auth.Name = "Gopher"
	err = c.JoinServer("127.0.0.1:" + port)
	var de bot.DisconnectErr
	if !errors.As(err, &de) {
		t.Fatalf("go-mc login should reach the backend and be kicked by it, got %v", err)
	}
	if got := chat.Message(de).ClearString(); got != "You reached go-mc-backend (as Gopher)" {
		t.Fatalf("kick text %q", got)
	}
	if b.Logins.Load() != 1 {
		t.Fatalf("backend saw %d logins", b.Logins.Load())
	}
}

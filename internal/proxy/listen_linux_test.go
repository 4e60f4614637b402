package proxy

import (
	"context"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/infrarust-go/infrarust/internal/config"
)

// The players' listener carries [keepalive] and every accepted socket inherits it,
// so a session pays no setsockopt for it.
func TestAcceptedSocketsInheritKeepalive(t *testing.T) {
	ka := config.Keepalive{Time: config.Duration(42 * time.Second), Interval: config.Duration(7 * time.Second), Retries: 5}
	ln, err := Listen(context.Background(), "127.0.0.1:0", ka)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String()) // completes in the backlog
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	_ = raw.Control(func(fd uintptr) {
		for name, o := range map[string][2]int{
			"SO_KEEPALIVE":  {unix.SOL_SOCKET, unix.SO_KEEPALIVE},
			"TCP_KEEPIDLE":  {unix.IPPROTO_TCP, unix.TCP_KEEPIDLE},
			"TCP_KEEPINTVL": {unix.IPPROTO_TCP, unix.TCP_KEEPINTVL},
			"TCP_KEEPCNT":   {unix.IPPROTO_TCP, unix.TCP_KEEPCNT},
		} {
			got[name], _ = unix.GetsockoptInt(int(fd), o[0], o[1])
		}
	})
	want := map[string]int{"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 42, "TCP_KEEPINTVL": 7, "TCP_KEEPCNT": 5}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("accepted socket %s = %d, want %d (inherited from the listener)", k, got[k], v)
		}
	}
}

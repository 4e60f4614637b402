package bench

import (
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/mc"
)

// A paced sender writes everything due in one write, never more than
// maxBurst batches and never none; an unpaced one writes a batch at a time.
func TestPacerBursts(t *testing.T) {
	const per = 1 << 20 // one MiB of packets per batch
	p := pacer{start: time.Now().Add(-100 * time.Millisecond), rate: 100, per: per}
	if k := p.next(); k < 9 || k > 11 {
		t.Fatalf("100 ms at 100 MiB/s of 1 MiB batches: next = %d, want about 10", k)
	}
	p.sent = 10
	if k := p.next(); k != 1 {
		t.Fatalf("nothing due: next = %d, want 1", k)
	}
	p = pacer{start: time.Now().Add(-time.Hour), rate: 100, per: per}
	if k := p.next(); k != maxBurst {
		t.Fatalf("far behind: next = %d, want maxBurst %d", k, maxBurst)
	}
	if k := (&pacer{start: time.Now(), per: per}).next(); k != 1 {
		t.Fatalf("unpaced: next = %d, want 1", k)
	}
}

// The client_only rows get a limit above their offline row: by one CFB8
// pass at the unit's throughput going up (decryption) and at the block's
// latency going down (encryption), the larger.
func TestCFB8Limits(t *testing.T) {
	if _, _, ok := mc.AESLimit(); !ok {
		t.Log("no AES-NI assembly here: no limit is set")
	}
	rows := []Row{
		{Name: "relay-up-1 offline", ProxyCPU: 2000, CPUUnit: "ms/GiB"},
		{Name: "relay-up-1 client_only", ProxyCPU: 4000, CPUUnit: "ms/GiB"},
		{Name: "relay-down-1 offline", ProxyCPU: 2000, CPUUnit: "ms/GiB"},
		{Name: "relay-down-1 client_only", ProxyCPU: 9000, CPUUnit: "ms/GiB"},
		{Name: "relay-down-1 passthrough", ProxyCPU: 100, CPUUnit: "ms/GiB"},
	}
	cfb8Limits(rows, t.Logf)
	if _, _, ok := mc.AESLimit(); !ok {
		for _, r := range rows {
			if r.CPULimit != 0 {
				t.Fatalf("%s: limit %v without a measurement", r.Name, r.CPULimit)
			}
		}
		return
	}
	up, down := rows[1].CPULimit-2000, rows[3].CPULimit-2000
	if up <= 0 || down <= up {
		t.Fatalf("CFB8 share of the limit: up %.0f, down %.0f ms/GiB; want 0 < up < down", up, down)
	}
	for _, i := range []int{0, 2, 4} {
		if rows[i].CPULimit != 0 {
			t.Fatalf("%s got a limit", rows[i].Name)
		}
	}
	if target, met := rowTarget(rows[3]); met == "" || target == "" {
		t.Fatalf("client_only row without a target: %q %q", target, met)
	}
}

// Held players answer one keep-alive a second: every session's frame comes
// back echoed, once per second of the window.
func TestKeepAlivesEchoEverySecond(t *testing.T) {
	e := testEnv(t)
	clients, _, err := e.openIdleMC(e.be.Addr(), "direct", 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClients(clients)
	n, err := keepAlives(clients, 2*time.Second)
	if err != nil || n != 10 {
		t.Fatalf("keep-alives = %d, %v; want 10 (5 players × 2 s)", n, err)
	}
}

// A command the proxy did pass on but whose go-ahead the client did not wait
// for arrives again (mcClient.command resends): the backend acts on the first
// and neither counts nor echoes the copies.
func TestRepeatedCommandIsIgnored(t *testing.T) {
	e := testEnv(t)
	for _, cmd := range []byte{cmdSink, cmdEcho} {
		c, err := loginMC(e.be.Addr(), "direct", e.identity(int(cmd)))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// An early copy, then command's own: two commands on the wire.
		if err := c.conn.WritePacket(idCommand, []byte{cmd}); err != nil {
			t.Fatal(err)
		}
		if cmd == cmdSink {
			// sendFor fails unless the backend's count is exactly what it sent.
			if _, err := c.sendFor(100*time.Millisecond, 0); err != nil {
				t.Fatalf("sink after a repeated command: %v", err)
			}
			continue
		}
		if err := c.command(cmd); err != nil {
			t.Fatal(err)
		}
		if n, err := keepAlives([]*mcClient{c}, time.Second); err != nil || n != 1 {
			t.Fatalf("echo after a repeated command: %d exchanges, %v; want 1", n, err)
		}
	}
}

// testEnv is the Minecraft-faithful backends and the stand-in session server,
// closed at the test's end.
func testEnv(t *testing.T) *mcEnv {
	t.Helper()
	o := Defaults()
	o.ReframeThreshold = -1
	e, err := startMCEnv(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

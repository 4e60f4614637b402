package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestSmoke runs every workload at a tiny size: it proves the tool still works
// (CI runs it); it asserts no timing.
func TestSmoke(t *testing.T) {
	o := Options{
		BulkTime: 50 * time.Millisecond, Streams: 2,
		RTTCount: 200, RTTTime: 200 * time.Millisecond, RTTSize: 32,
		StormTime: 200 * time.Millisecond, Clients: 4,
		Sessions: 50, Rounds: 1,
		Logf: t.Logf,
	}
	res, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 10 {
		t.Errorf("%d rows, want 10 (4 bulk, 3 rtt, 2 status, 1 login)", len(res.Rows))
	}
	for _, r := range res.Rows {
		if r.Direct <= 0 || r.Proxy <= 0 {
			t.Errorf("%s: direct %v proxy %v; both must have measured something", r.Name, r.Direct, r.Proxy)
		}
	}
	m := res.Memory
	if m == nil || m.Sessions != 50 {
		t.Fatalf("memory figure missing: %+v", m)
	}
	if m.ActiveAfter != 0 {
		t.Errorf("proxy still counts %d active connections after every session closed", m.ActiveAfter)
	}
	var buf bytes.Buffer
	WriteTable(&buf, res)
	if !strings.Contains(buf.String(), "status-cache-on-4") {
		t.Errorf("table lacks the status row:\n%s", buf.String())
	}
}

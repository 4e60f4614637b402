package balance

import (
	"testing"
	"time"
)

func TestFreeSlots(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	addrs := []Address{{Address: "a", Weight: 1}, {Address: "b", Weight: 1}}
	tests := []struct {
		name      string
		report    func(p *Pool)
		at        time.Duration
		wantFree  int
		wantKnown bool
	}{
		{"no status answer yet", func(p *Pool) {}, 0, 0, false},
		{"both answered", func(p *Pool) {
			p.ReportStatus("a", 18, 20, t0)
			p.ReportStatus("b", 5, 10, t0)
		}, time.Second, 7, true},
		{"a full address counts no room, never negative", func(p *Pool) {
			p.ReportStatus("a", 25, 20, t0)
			p.ReportStatus("b", 9, 10, t0)
		}, time.Second, 1, true},
		{"answers older than FullTTL are not trusted", func(p *Pool) {
			p.ReportStatus("a", 0, 20, t0)
		}, time.Hour, 0, false},
		{"a drained address takes nobody", func(p *Pool) {
			p.ReportStatus("a", 0, 20, t0)
			p.ReportStatus("b", 0, 10, t0)
			if err := p.SetDrain("b", true, t0); err != nil {
				t.Fatal(err)
			}
		}, time.Second, 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPool(Options{Strategy: RoundRobin}, addrs, t0)
			tt.report(p)
			free, known := p.FreeSlots(t0.Add(tt.at))
			if free != tt.wantFree || known != tt.wantKnown {
				t.Fatalf("FreeSlots = %d, %v; want %d, %v", free, known, tt.wantFree, tt.wantKnown)
			}
		})
	}
}

func TestFreeSlotsCountsLoginsSinceTheAnswer(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	p := NewPool(Options{}, []Address{{Address: "a", Weight: 1}}, t0)
	p.ReportStatus("a", 17, 20, t0)
	for i := 0; i < 2; i++ {
		l, ok := p.Acquire(t0, nil)
		if !ok {
			t.Fatal("no pick")
		}
		l.Connected(t0, time.Millisecond)
	}
	if free, _ := p.FreeSlots(t0); free != 1 {
		t.Fatalf("after 2 logins on 17/20: free = %d, want 1", free)
	}
}

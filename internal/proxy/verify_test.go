package proxy

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/mc"
	"github.com/infrarust-go/infrarust/internal/passes"
)

// Attack mode turns on when one second holds more logins than the
// threshold, stays on while they keep coming, and ends calm_period after
// the last busy second.
func TestVerifierAttackMode(t *testing.T) {
	cfg := config.Verify{AttackThreshold: 5, CalmPeriod: config.Duration(10 * time.Second)}
	var v verifier
	now := time.Unix(1_800_000_000, 0)
	for i := range 5 {
		if on, _, _ := v.login(now.Add(time.Duration(i)*time.Millisecond), cfg); on {
			t.Fatalf("attack mode at %d logins in a second, threshold 5", i+1)
		}
	}
	on, changed, _ := v.login(now.Add(10*time.Millisecond), cfg)
	if !on || !changed {
		t.Fatalf("the 6th login in a second: on=%v changed=%v", on, changed)
	}
	// Quiet seconds within the calm period: still on.
	if on, changed, _ := v.login(now.Add(5*time.Second), cfg); !on || changed {
		t.Fatalf("within calm_period: on=%v changed=%v", on, changed)
	}
	if v.calm(now.Add(9 * time.Second)) {
		t.Fatal("calm before calm_period ended")
	}
	if !v.calm(now.Add(11 * time.Second)) {
		t.Fatal("attack mode outlived calm_period")
	}
	if on, _, _ := v.login(now.Add(12*time.Second), cfg); on {
		t.Fatal("one login after the calm turned attack mode on again")
	}
}

// Before a flood crosses attack_threshold it rises through the watermark (a
// quarter of it): from there, logins are checked, so none of the crossing
// second's reaches a backend unchecked, and neither does a flood held just
// under the threshold. A rate under the watermark checks nobody.
func TestVerifierRisingRateIsChecked(t *testing.T) {
	cfg := config.Verify{AttackThreshold: 20, CalmPeriod: config.Duration(10 * time.Second)}
	var v verifier
	now := time.Unix(1_800_000_000, 0)
	for i := range 5 {
		if _, _, rising := v.login(now.Add(time.Duration(i)*time.Millisecond), cfg); rising {
			t.Fatalf("login %d of a second, watermark 5: checked", i+1)
		}
	}
	if on, _, rising := v.login(now.Add(10*time.Millisecond), cfg); on || !rising {
		t.Fatalf("the 6th login of a second: attack %v rising %v; want checked, attack mode still off", on, rising)
	}
	// A flood held at 19 a second, just under the threshold: every login
	// after the watermark is checked, second after second, and the first of
	// the next second too (the second before counts).
	for sec := 1; sec <= 3; sec++ {
		for i := range 19 {
			on, _, rising := v.login(now.Add(time.Duration(sec)*time.Second+time.Duration(i)*time.Millisecond), cfg)
			if on {
				t.Fatal("19 a second turned attack mode on (threshold 20)")
			}
			if !rising {
				t.Fatalf("second %d, login %d of a flood at 19/s: unchecked", sec, i+1)
			}
		}
	}
	// Calm again: a second later than the next, one login is not checked.
	if _, _, rising := v.login(now.Add(10*time.Second), cfg); rising {
		t.Fatal("a login after quiet seconds was checked")
	}
}

func TestVerifierBounds(t *testing.T) {
	var v verifier
	r1, ok1 := v.acquire(2, time.Millisecond)
	_, ok2 := v.acquire(2, time.Millisecond)
	if _, ok3 := v.acquire(2, 20*time.Millisecond); !ok1 || !ok2 || ok3 {
		t.Fatal("max_concurrent 2 did not bound the checks")
	}
	// A login past the bound waits for a slot rather than being refused at once.
	got := make(chan bool)
	go func() {
		_, ok := v.acquire(2, 5*time.Second)
		got <- ok
	}()
	time.Sleep(20 * time.Millisecond)
	r1()
	if !<-got {
		t.Fatal("a queued login did not get the slot freed for it")
	}
	now := time.Unix(1_800_000_000, 0)
	steve := playerAt("Steve", netip.MustParseAddr("1.2.3.4"))
	v.passed.add(steve, now.Add(time.Hour))
	if !v.passed.has(playerAt("steve", netip.MustParseAddr("1.2.3.4")), now) || v.passed.has(playerAt("steve", netip.MustParseAddr("1.2.3.5")), now) || v.passed.has(steve, now.Add(2*time.Hour)) {
		t.Fatal("passes are per name and address, until ttl")
	}
}

// Attack mode's changes are events (and the gauge), not only a log line.
func TestAttackModeEvents(t *testing.T) {
	bus := events.NewBus()
	sub := bus.Subscribe(4, events.VerifyAttackMode)
	p := assemble(&core{bus: bus, log: slog.New(slog.DiscardHandler)})
	p.checks.attackChanged(true)
	p.checks.attackChanged(false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, want := range []bool{true, false} {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatal("no verify.attack_mode event:", err)
		}
		if m, ok := ev.Data.(events.AttackMode); !ok || m.On != want {
			t.Fatalf("event %+v, want on=%v", ev, want)
		}
	}
}

// A pass kept beyond this proxy's memory (an earlier run, another proxy of the
// fleet) lets the player in without a check; forgetting his name drops it
// from the store and from memory, and he is checked again.
func TestVerificationPassesOutliveMemory(t *testing.T) {
	store, err := passes.OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s := interceptedServer("lobby", config.ModeOffline, deadAddress(t))
	s.LimboHandlers = []config.LimboHandler{config.LimboVerify}
	tp := startProxyOpts(t, func(c *config.Config) { c.Verify.Mode = config.VerifyAlways },
		Options{OpenPasses: func() (passes.Store, error) { return store, nil }}, s)
	ip := netip.MustParseAddr("203.0.113.7")
	if err := store.Pass(context.Background(), "Steve", ip.String(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	lobby := tp.state.Load().servers["lobby"]
	cn := &conn{st: tp.state.Load(), player: "steve", ip: ip, protocol: int32(mc.V1_8)}
	release, err := tp.checks.needsVerify(cn, lobby, true)
	if err != nil || release != nil || !cn.proof.verified {
		t.Fatalf("a stored pass: release %v, err %v, verified %v; want no check", release != nil, err, cn.proof.verified)
	}
	if n, err := tp.ForgetVerified(context.Background(), "STEVE"); err != nil || n != 1 {
		t.Fatalf("forget: %d, %v", n, err)
	}
	// An address in another spelling is the same address.
	v6 := netip.MustParseAddr("2001:db8::7")
	_ = store.Pass(context.Background(), "Alex", v6.String(), time.Now().Add(time.Hour))
	if n, err := tp.ForgetVerified(context.Background(), "2001:DB8:0::7"); err != nil || n != 1 {
		t.Fatalf("forget an address spelled otherwise: %d, %v", n, err)
	}
	cn = &conn{st: tp.state.Load(), player: "Steve", ip: ip, protocol: int32(mc.V1_8)}
	release, err = tp.checks.needsVerify(cn, lobby, true)
	if err != nil || release == nil {
		t.Fatalf("after forget: release %v, err %v; want a check", release != nil, err)
	}
	release()
}

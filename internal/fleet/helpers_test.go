package fleet

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/infrarust-go/infrarust/internal/bans"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

// fakeLocal is a proxy's stores in memory, recording what the fleet did to them.
type fakeLocal struct {
	mu      sync.Mutex
	drains  map[string]bool // server|address -> drained
	maint   map[string]bool // servers in maintenance
	bans    map[string]bans.Ban
	players []Player
	resets  []string
	claimed []string // "key|other|self" of every SessionClaimed
	ran     []string // "action|player|arg|from" of every RunCommand
	writes  int      // SetDrained, AddBan and RemoveBan calls
	now     func() time.Time
}

func newFakeLocal(now func() time.Time) *fakeLocal {
	return &fakeLocal{drains: map[string]bool{}, maint: map[string]bool{}, bans: map[string]bans.Ban{}, now: now}
}

func (l *fakeLocal) InMaintenance(server string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.maint[server]
}

func (l *fakeLocal) SetMaintenance(server string, on bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if on {
		l.maint[server] = true
	} else {
		delete(l.maint, server)
	}
	return nil
}

func (l *fakeLocal) Maintenances() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(maps.Keys(l.maint))
}

func (l *fakeLocal) Drained(server, address string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.drains[server+"|"+address]
}

func (l *fakeLocal) SetDrained(server, address string, drained bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if drained {
		l.drains[server+"|"+address] = true
	} else {
		delete(l.drains, server+"|"+address)
	}
	return nil
}

func (l *fakeLocal) Reset(server, address string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.resets = append(l.resets, server+"|"+address)
	return nil
}

func (l *fakeLocal) Drains() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(l.drains)) {
		srv, addr, _ := cut(k)
		out[srv] = append(out[srv], addr)
	}
	return out
}

func cut(k string) (string, string, bool) {
	for i := range len(k) {
		if k[i] == '|' {
			return k[:i], k[i+1:], true
		}
	}
	return k, "", false
}

func (l *fakeLocal) Bans() []bans.Ban {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []bans.Ban
	for _, b := range l.bans {
		if b.ExpiresAt == nil || l.now().Before(*b.ExpiresAt) {
			out = append(out, b)
		}
	}
	return out
}

func (l *fakeLocal) AddBan(b bans.Ban) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	l.bans[string(b.Type)+"|"+b.Value] = b
	return nil
}

func (l *fakeLocal) RemoveBan(t bans.Type, value string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if _, ok := l.bans[string(t)+"|"+value]; !ok {
		return bans.ErrNotFound
	}
	delete(l.bans, string(t)+"|"+value)
	return nil
}

func (l *fakeLocal) RunCommand(action, player, arg, from string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ran = append(l.ran, action+"|"+player+"|"+arg+"|"+from)
	return nil
}

func (l *fakeLocal) SessionClaimed(key string, at time.Time, strength int, other, self string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.claimed = append(l.claimed, key+"|"+other+"|"+self)
}

func (l *fakeLocal) Players() []Player {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.players)
}

func (l *fakeLocal) setPlayers(ps ...Player) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.players = ps
}

func (l *fakeLocal) banned(t bans.Type, v string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.bans[string(t)+"|"+v]
	return ok
}

// member is one proxy of a test fleet, driven step by step (no Run loop) so each
// test decides when it syncs, pushes and beats.
type member struct {
	*Fleet
	local *fakeLocal
	dir   string
}

func testConfig(url string) config.Fleet {
	c := config.Default().Fleet
	c.Redis = url
	c.Timeout = config.Duration(300 * time.Millisecond)
	return c
}

// newMember makes proxy id of the fleet on mr with its data in dir ("" = a fresh one).
func newMember(t *testing.T, mr *miniredis.Miniredis, id, dir string, clk *testutil.Clock) *member {
	t.Helper()
	return newSecretMember(t, mr, id, dir, clk, "")
}

// newSecretMember is newMember with [fleet] secret (INFRARUST_FLEET_SECRET).
func newSecretMember(t *testing.T, mr *miniredis.Miniredis, id, dir string, clk *testutil.Clock, secret string) *member {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	local := newFakeLocal(clk.Now)
	cfg := testConfig("redis://" + mr.Addr())
	cfg.Secret = secret
	f, err := New(Options{
		Config: cfg, DataDir: dir, Local: local, Now: clk.Now,
		Version: "test", StartedAt: clk.Now(), Hostname: func() (string, error) { return id, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &member{Fleet: f, local: local, dir: dir}
}

// connect is one successful round of the Run loop: sync, heartbeat, view.
func (m *member) connect(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, step := range []func(context.Context) error{m.sync, m.heartbeat, m.refreshView} {
		if err := step(ctx); err != nil {
			t.Fatalf("%s: %v", m.id, err)
		}
	}
	m.setUp()
}

// fail is one failed round of the Run loop (Redis gone).
func (m *member) fail(t *testing.T) {
	t.Helper()
	err := m.sync(context.Background())
	if err == nil {
		t.Fatalf("%s: sync worked with Redis down", m.id)
	}
	m.setDown(err)
}

// drainNow is what the admin API does: apply locally, then record.
func (m *member) drainNow(server, addr string, drained bool) *Receipt {
	_ = m.local.SetDrained(server, addr, drained)
	return m.Drain(server, addr, drained)
}

func (m *member) pushNow(t *testing.T) {
	t.Helper()
	if err := m.push(context.Background()); err != nil {
		t.Fatalf("%s: push: %v", m.id, err)
	}
}

func startMiniredis(t *testing.T) *miniredis.Miniredis {
	t.Helper()
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mr.Close)
	return mr
}

// listener collects what the fleet's changes channel carries, so a test can
// deliver messages to members when it chooses.
type listener struct {
	ps  *redis.PubSub
	got chan string
}

func listen(t *testing.T, mr *miniredis.Miniredis) *listener {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	ps := c.Subscribe(context.Background(), "infrarust:changes")
	if _, err := ps.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := &listener{ps: ps, got: make(chan string, 100)}
	go func() {
		for m := range ps.Channel() {
			l.got <- m.Payload
		}
	}()
	t.Cleanup(func() { ps.Close(); c.Close() })
	return l
}

// next waits for the next published message (miniredis delivers at once).
func (l *listener) next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-l.got:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message was published")
		return ""
	}
}

// none checks that nothing more was published: a marker published now arrives
// after anything published before it.
func (l *listener) none(t *testing.T, mr *miniredis.Miniredis) {
	t.Helper()
	mr.Publish("infrarust:changes", "marker")
	if m := l.next(t); m != "marker" {
		t.Fatalf("unexpected message %s", m)
	}
}

package bans

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)

func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

func tp(t time.Time) *time.Time { return &t }

func mustOpen(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, t0)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	return s
}

func mustAdd(t *testing.T, s *Store, b Ban) Ban {
	t.Helper()
	nb, err := s.Add(b, t0)
	if err != nil {
		t.Fatalf("Add(%+v): %v", b, err)
	}
	return nb
}

func TestAddNormalises(t *testing.T) {
	tests := []struct {
		typ       Type
		in, want  string
		wantError string
	}{
		{TypeIP, "203.0.113.7", "203.0.113.7", ""},
		{TypeIP, " 203.0.113.7 ", "203.0.113.7", ""},
		{TypeIP, "203.0.113.7/32", "203.0.113.7", ""},
		{TypeIP, "203.0.113.77/24", "203.0.113.0/24", ""},
		{TypeIP, "::ffff:203.0.113.7", "203.0.113.7", ""},
		{TypeIP, "::ffff:203.0.113.0/120", "203.0.113.0/24", ""},
		{TypeIP, "2001:DB8::1", "2001:db8::1", ""},
		{TypeIP, "2001:db8::1/48", "2001:db8::/48", ""},
		{TypeIP, "example.com", "", "invalid IP"},
		{TypeIP, "10.0.0.0/33", "", "invalid CIDR"},
		{TypeIP, "fe80::1%eth0", "", "zone"},
		{TypeUsername, "Notch", "notch", ""},
		{TypeUsername, "x_Bot-1", "x_bot-1", ""},
		{TypeUsername, "", "", "1 to 16"},
		{TypeUsername, "abcdefghijklmnopq", "", "1 to 16"},
		{TypeUsername, "two words", "", "printable"},
		{TypeUUID, "069A79F4-44E9-4726-A5BE-FCA90E38AAF5", "069a79f4-44e9-4726-a5be-fca90e38aaf5", ""},
		{TypeUUID, "069a79f444e94726a5befca90e38aaf5", "069a79f4-44e9-4726-a5be-fca90e38aaf5", ""},
		{TypeUUID, "069a79f4-44e9-4726-a5be-fca90e38aaf", "", "invalid UUID"},
		{TypeUUID, "069a79f4+44e9-4726-a5be-fca90e38aaf5", "", "invalid UUID"},
		{TypeUUID, "g69a79f444e94726a5befca90e38aaf5", "", "invalid UUID"},
		{"player", "x", "", "invalid ban type"},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ)+"/"+tt.in, func(t *testing.T) {
			s := mustOpen(t, "")
			b, err := s.Add(Ban{Type: tt.typ, Value: tt.in, Reason: "r"}, t0)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("Add error = %v, want one mentioning %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatalf("Add: %v", err)
			}
			if b.Value != tt.want {
				t.Fatalf("Value = %q, want %q", b.Value, tt.want)
			}
			if !b.CreatedAt.Equal(t0) {
				t.Fatalf("CreatedAt = %v, want now (%v)", b.CreatedAt, t0)
			}
		})
	}
}

func TestAddRejectsPastExpiry(t *testing.T) {
	s := mustOpen(t, "")
	if _, err := s.Add(Ban{Type: TypeIP, Value: "192.0.2.1", ExpiresAt: tp(t0)}, t0); err == nil {
		t.Fatal("Add accepted a ban that expires now")
	}
}

func TestChecks(t *testing.T) {
	s := mustOpen(t, "")
	mustAdd(t, s, Ban{Type: TypeIP, Value: "203.0.113.7", Reason: "single"})
	mustAdd(t, s, Ban{Type: TypeIP, Value: "198.51.100.0/24", Reason: "range"})
	mustAdd(t, s, Ban{Type: TypeIP, Value: "2001:db8:bad::/48", Reason: "v6 range"})
	mustAdd(t, s, Ban{Type: TypeUsername, Value: "Griefer", Reason: "name"})
	mustAdd(t, s, Ban{Type: TypeUUID, Value: "069a79f444e94726a5befca90e38aaf5", Reason: "uuid"})
	mustAdd(t, s, Ban{Type: TypeUsername, Value: "tempban", Reason: "temp", ExpiresAt: tp(t0.Add(time.Hour))})

	tests := []struct {
		name       string
		ip         string
		user, uuid string
		at         time.Duration
		wantReason string // "" = not banned
		ipOnly     bool   // CheckIP must agree
	}{
		{"clean player", "192.0.2.1", "alex", "", 0, "", true},
		{"exact IP", "203.0.113.7", "alex", "", 0, "single", true},
		{"v4-mapped exact IP", "::ffff:203.0.113.7", "alex", "", 0, "single", true},
		{"neighbour of exact IP", "203.0.113.8", "alex", "", 0, "", true},
		{"CIDR member", "198.51.100.200", "alex", "", 0, "range", true},
		{"v4-mapped CIDR member", "::ffff:198.51.100.1", "alex", "", 0, "range", true},
		{"outside CIDR", "198.51.101.1", "alex", "", 0, "", true},
		{"v6 CIDR member", "2001:db8:bad:1::5", "alex", "", 0, "v6 range", true},
		{"username any case", "192.0.2.1", "GRIEFER", "", 0, "name", false},
		{"uuid dashed upper", "192.0.2.1", "alex", "069A79F4-44E9-4726-A5BE-FCA90E38AAF5", 0, "uuid", false},
		{"uuid undashed", "192.0.2.1", "alex", "069a79f444e94726a5befca90e38aaf5", 0, "uuid", false},
		{"uuid wins over name", "192.0.2.1", "griefer", "069a79f4-44e9-4726-a5be-fca90e38aaf5", 0, "uuid", false},
		{"garbage uuid ignored", "192.0.2.1", "alex", "nope", 0, "", false},
		{"temp ban in force", "192.0.2.1", "TempBan", "", 59 * time.Minute, "temp", false},
		{"temp ban over", "192.0.2.1", "TempBan", "", time.Hour, "", false},
		{"overlong username", "192.0.2.1", strings.Repeat("a", 40), "", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := t0.Add(tt.at)
			b, ok := s.CheckPlayer(ip(tt.ip), tt.user, tt.uuid, now)
			if ok != (tt.wantReason != "") || b.Reason != tt.wantReason {
				t.Fatalf("CheckPlayer = (%q, %v), want reason %q", b.Reason, ok, tt.wantReason)
			}
			if tt.ipOnly {
				b, ok := s.CheckIP(ip(tt.ip), now)
				if ok != (tt.wantReason != "") || b.Reason != tt.wantReason {
					t.Fatalf("CheckIP = (%q, %v), want reason %q", b.Reason, ok, tt.wantReason)
				}
			}
		})
	}
}

func TestReplaceAndRemove(t *testing.T) {
	s := mustOpen(t, "")
	mustAdd(t, s, Ban{Type: TypeUsername, Value: "Notch", Reason: "first"})
	mustAdd(t, s, Ban{Type: TypeUsername, Value: "NOTCH", Reason: "second"})
	mustAdd(t, s, Ban{Type: TypeIP, Value: "10.0.0.0/8", Reason: "a"})
	mustAdd(t, s, Ban{Type: TypeIP, Value: "10.9.9.9/8", Reason: "b"})
	list := s.List(t0)
	if len(list) != 2 {
		t.Fatalf("List has %d bans, want 2 (same type+value replaces): %+v", len(list), list)
	}
	if b, _ := s.CheckPlayer(ip("192.0.2.1"), "notch", "", t0); b.Reason != "second" {
		t.Fatalf("replaced ban reason = %q, want second", b.Reason)
	}
	old, err := s.Remove(TypeUsername, "Notch", t0)
	if err != nil || old.Reason != "second" {
		t.Fatalf("Remove = (%+v, %v)", old, err)
	}
	if _, err := s.Remove(TypeUsername, "notch", t0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Remove error = %v, want ErrNotFound", err)
	}
	if _, err := s.Remove(TypeIP, "10.1.2.3/8", t0); err != nil {
		t.Fatalf("Remove CIDR by another spelling: %v", err)
	}
	if _, ok := s.CheckIP(ip("10.1.1.1"), t0); ok {
		t.Fatal("removed CIDR still matches")
	}
	if _, err := s.Remove(TypeIP, "10.0.0.1", t0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Remove of a never-banned IP = %v, want ErrNotFound", err)
	}
}

func TestExpiryPurge(t *testing.T) {
	s := mustOpen(t, "")
	mustAdd(t, s, Ban{Type: TypeIP, Value: "192.0.2.1", ExpiresAt: tp(t0.Add(time.Minute))})
	mustAdd(t, s, Ban{Type: TypeIP, Value: "192.0.2.0/24", ExpiresAt: tp(t0.Add(time.Minute))})
	mustAdd(t, s, Ban{Type: TypeUUID, Value: "069a79f444e94726a5befca90e38aaf5", ExpiresAt: tp(t0.Add(time.Minute))})
	mustAdd(t, s, Ban{Type: TypeUsername, Value: "forever"})
	if got := len(s.List(t0.Add(59 * time.Second))); got != 4 {
		t.Fatalf("List before expiry has %d bans, want 4", got)
	}
	if got := len(s.List(t0.Add(time.Minute))); got != 1 {
		t.Fatalf("List at expiry has %d bans, want 1", got)
	}
	if got := s.Len(); got != 1 {
		t.Fatalf("Len after purge = %d, want 1", got)
	}
	if _, err := s.Remove(TypeIP, "192.0.2.1", t0.Add(time.Hour)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Remove of expired ban = %v, want ErrNotFound", err)
	}
}

func TestPersistenceAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "bans.json") // directory created on first write
	s := mustOpen(t, path)
	want := []Ban{
		mustAdd(t, s, Ban{Type: TypeIP, Value: "198.51.100.0/24", Reason: "range", CreatedBy: "admin"}),
		mustAdd(t, s, Ban{Type: TypeUsername, Value: "Griefer", Reason: "name", ExpiresAt: tp(t0.Add(48 * time.Hour))}),
		mustAdd(t, s, Ban{Type: TypeUUID, Value: "069a79f444e94726a5befca90e38aaf5", Reason: "short", ExpiresAt: tp(t0.Add(time.Hour))}),
		mustAdd(t, s, Ban{Type: TypeIP, Value: "203.0.113.7"}),
	}
	if _, err := s.Remove(TypeIP, "203.0.113.7", t0); err != nil {
		t.Fatal(err)
	}
	want = want[:3]

	r := mustOpen(t, path)
	if got := r.List(t0); !equalBans(got, want) {
		t.Fatalf("after reopen List = %+v, want %+v", got, want)
	}
	if _, ok := r.CheckIP(ip("198.51.100.9"), t0); !ok {
		t.Fatal("reopened store lost the CIDR ban")
	}
	// Reopening after the short ban ended purges it on load.
	later, err := Open(path, t0.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got := later.Len(); got != 2 {
		t.Fatalf("reopen after expiry loaded %d bans, want 2", got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ban file mode = %v (err %v), want 0600", fi.Mode().Perm(), err)
	}
}

func equalBans(a, b []Ban) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type != y.Type || x.Value != y.Value || x.Reason != y.Reason || x.CreatedBy != y.CreatedBy ||
			!x.CreatedAt.Equal(y.CreatedAt) || (x.ExpiresAt == nil) != (y.ExpiresAt == nil) ||
			(x.ExpiresAt != nil && !x.ExpiresAt.Equal(*y.ExpiresAt)) {
			return false
		}
	}
	return true
}

func TestLeftoverTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bans.json")
	s := mustOpen(t, path)
	mustAdd(t, s, Ban{Type: TypeUsername, Value: "kept"})
	// Crashes mid-write leave truncated temp files beside the real one.
	leftovers := []string{filepath.Join(dir, "bans.json.tmp-123456"), filepath.Join(dir, "bans.json.tmp-7")}
	for _, name := range leftovers {
		if err := os.WriteFile(name, []byte(`{"version":1,"bans":[{"ty`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(dir, "other.json.tmp-1")
	if err := os.WriteFile(other, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustOpen(t, path)
	if _, ok := r.CheckPlayer(ip("192.0.2.1"), "kept", "", t0); !ok || r.Len() != 1 {
		t.Fatalf("leftover temp file changed what was loaded (Len %d)", r.Len())
	}
	for _, name := range leftovers {
		if _, err := os.Stat(name); !os.IsNotExist(err) {
			t.Errorf("leftover %s still there after Open (%v)", filepath.Base(name), err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another file's temp file was removed: %v", err)
	}
	mustAdd(t, r, Ban{Type: TypeUsername, Value: "second"})
	if got := mustOpen(t, path).Len(); got != 2 {
		t.Fatalf("write after leftover temp file: reopened Len = %d, want 2", got)
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name, content, wantInMsg string
	}{
		{"truncated JSON", `{"version":1,"bans":[{"type":"ip"`, "corrupt"},
		{"not JSON", "hello", "corrupt"},
		{"unknown version", `{"version":2,"bans":[]}`, "unsupported version"},
		{"bad entry", `{"version":1,"bans":[{"type":"ip","value":"nope"}]}`, "entry 1"},
		{"bad type", `[{"type":"mac","value":"x"}]`, "invalid ban type"},
		{"null", "null\n", "null"},
		{"null list", `{"version":1,"bans":null}`, "null"},
		{"no list", `{"version":1}`, "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bans.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path, t0)
			if err == nil || !strings.Contains(err.Error(), tt.wantInMsg) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open error = %v, want one naming %s and mentioning %q", err, path, tt.wantInMsg)
			}
			if data, _ := os.ReadFile(path); string(data) != tt.content {
				t.Fatal("a corrupt ban file was modified")
			}
		})
	}
}

func TestOpenMissingAndBareArray(t *testing.T) {
	dir := t.TempDir()
	if s := mustOpen(t, filepath.Join(dir, "absent.json")); s.Len() != 0 {
		t.Fatal("missing file should be an empty list")
	}
	path := filepath.Join(dir, "hand.json")
	content := `[{"type":"username","value":"Steve","reason":"hand-written","created_at":"2026-01-01T00:00:00Z","created_by":"ops"}]`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, path)
	if b, ok := s.CheckPlayer(ip("192.0.2.1"), "steve", "", t0); !ok || b.Reason != "hand-written" {
		t.Fatalf("bare-array file not loaded: (%+v, %v)", b, ok)
	}
}

func TestPersistFailureLeavesStateUnchanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, filepath.Join(dir, "bans.json"))
	// Replace the data directory by a file so every write fails.
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(Ban{Type: TypeUsername, Value: "x"}, t0); err == nil {
		t.Fatal("Add succeeded although the list could not be saved")
	}
	if s.Len() != 0 {
		t.Fatal("a ban that was not saved became visible")
	}
}

func TestKickMessage(t *testing.T) {
	tests := []struct {
		name string
		ban  Ban
		want string
	}{
		{"permanent", Ban{Reason: "Griefing"}, "You are banned: Griefing"},
		{"no reason", Ban{}, "You are banned."},
		{"days and hours", Ban{Reason: "Spam", ExpiresAt: tp(t0.Add(7 * 24 * time.Hour).Add(-time.Minute))},
			"You are banned: Spam\nBan ends in 6d 23h (2026-12-06 20:59 UTC)"},
		{"exactly a week", Ban{Reason: "Spam", ExpiresAt: tp(t0.Add(7 * 24 * time.Hour))},
			"You are banned: Spam\nBan ends in 7d (2026-12-06 21:00 UTC)"},
		{"minutes and seconds", Ban{Reason: "x", ExpiresAt: tp(t0.Add(5*time.Minute + 3*time.Second))},
			"You are banned: x\nBan ends in 5m 3s (2026-11-29 21:05 UTC)"},
		{"rounds up sub-second", Ban{Reason: "x", ExpiresAt: tp(t0.Add(300 * time.Millisecond))},
			"You are banned: x\nBan ends in 1s (2026-11-29 21:00 UTC)"},
		{"non-UTC expiry shown in UTC", Ban{Reason: "x", ExpiresAt: tp(t0.Add(2 * time.Hour).In(time.FixedZone("CET", 3600)))},
			"You are banned: x\nBan ends in 2h (2026-11-29 23:00 UTC)"},
		{"already over", Ban{Reason: "x", ExpiresAt: tp(t0)}, "You are banned: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ban.KickMessage(t0); got != tt.want {
				t.Fatalf("KickMessage =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestCheckIPDoesNotAllocate(t *testing.T) {
	s := mustOpen(t, "")
	mustAdd(t, s, Ban{Type: TypeIP, Value: "198.51.100.0/24"})
	mustAdd(t, s, Ban{Type: TypeIP, Value: "203.0.113.7"})
	mustAdd(t, s, Ban{Type: TypeUUID, Value: "069a79f444e94726a5befca90e38aaf5"})
	a := ip("192.0.2.1")
	if n := testing.AllocsPerRun(100, func() { s.CheckIP(a, t0) }); n != 0 {
		t.Fatalf("CheckIP allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		s.CheckPlayer(a, "SomePlayer", "069A79F4-44E9-4726-A5BE-FCA90E38AAF5", t0)
	}); n != 0 {
		t.Fatalf("CheckPlayer allocates %v times per call", n)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := mustOpen(t, filepath.Join(t.TempDir(), "bans.json"))
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			name := []string{"a", "b", "c", "d"}[i]
			for range 5 {
				if _, err := s.Add(Ban{Type: TypeUsername, Value: name}, t0); err != nil {
					t.Error(err)
				}
				s.CheckPlayer(ip("192.0.2.1"), name, "", t0)
				s.List(t0)
			}
		})
	}
	wg.Wait()
	if got := mustOpen(t, s.path).Len(); got != 4 {
		t.Fatalf("reopened after concurrent writes: %d bans, want 4", got)
	}
}

func BenchmarkCheckIP(b *testing.B) {
	s, _ := Open("", t0)
	for i := range 100 {
		if _, err := s.Add(Ban{Type: TypeIP, Value: netip.AddrFrom4([4]byte{10, byte(i), 0, 0}).String() + "/16"}, t0); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Add(Ban{Type: TypeIP, Value: netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}).String()}, t0); err != nil {
			b.Fatal(err)
		}
	}
	a := ip("203.0.113.50")
	b.ReportAllocs()
	for b.Loop() {
		s.CheckIP(a, t0)
	}
}

package admin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDrainStoreSurvivesReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // created on first write
	s, err := OpenDrainStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		server, addr string
		drained      bool
	}{
		{"lobby", "10.0.0.2:25565", true},
		{"lobby", "10.0.0.1:25565", true},
		{"lobby", "10.0.0.1:25565", true}, // idempotent
		{"survival", "[2001:db8::1]:25565", true},
		{"survival", "[2001:db8::1]:25565", false},
		{"survival", "10.9.9.9:25565", false}, // lifting nothing is fine
	}
	for _, st := range steps {
		if err := s.Set(st.server, st.addr, st.drained); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{"lobby": {"10.0.0.1:25565", "10.0.0.2:25565"}}
	r, err := OpenDrainStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !equalDrains(r.All(), want) {
		t.Fatalf("reopened %v, want %v", r.All(), want)
	}
	if !r.Drained("lobby", "10.0.0.2:25565") || r.Drained("survival", "[2001:db8::1]:25565") {
		t.Fatal("Drained disagrees with All")
	}
}

func TestDrainStoreRemovesLeftoverTempFiles(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenDrainStore(dir)
	if err := s.Set("lobby", "10.0.0.2:25565", true); err != nil {
		t.Fatal(err)
	}
	// Crashes between CreateTemp and Rename leave truncated temp files behind.
	var leftovers []string
	for _, suffix := range []string{"123", "4567890"} {
		name := filepath.Join(dir, "."+DrainFileName+".tmp-"+suffix)
		if err := os.WriteFile(name, []byte(`{"lobby": ["10.0.0`), 0o600); err != nil {
			t.Fatal(err)
		}
		leftovers = append(leftovers, name)
	}
	unrelated := filepath.Join(dir, "notes.tmp-1")
	if err := os.WriteFile(unrelated, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := OpenDrainStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !equalDrains(r.All(), map[string][]string{"lobby": {"10.0.0.2:25565"}}) {
		t.Fatalf("state %v", r.All())
	}
	for _, name := range leftovers {
		if _, err := os.Stat(name); !os.IsNotExist(err) {
			t.Errorf("leftover %s still there after open (%v)", filepath.Base(name), err)
		}
	}
	if _, err := os.Stat(unrelated); err != nil {
		t.Errorf("an unrelated file was removed: %v", err)
	}
	// And the next write still works next to it.
	if err := r.Set("lobby", "10.0.0.3:25565", true); err != nil {
		t.Fatal(err)
	}
}

func TestDrainStoreCorruptFileIsReportedNotEmptied(t *testing.T) {
	for _, content := range []string{`{"lobby": ["10.0.0.2:25565"`, ``, `["not", "a", "map"]`, `{"lobby": "10.0.0.2"}`,
		`null`, " null\n", `{"lobby": null}`} {
		dir := t.TempDir()
		path := filepath.Join(dir, DrainFileName)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenDrainStore(dir)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "delete it") {
			t.Errorf("content %q: err %v, want an error naming %s and the fix", content, err, path)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Errorf("content %q: file changed to %q", content, got)
		}
	}
}

func TestDrainStoreReplay(t *testing.T) {
	dir := t.TempDir()
	s, _ := OpenDrainStore(dir)
	for _, e := range [][2]string{
		{"lobby", "10.0.0.2:25565"},
		{"lobby", "10.0.0.7:25565"}, // address removed from config
		{"gone", "10.1.1.1:25565"},  // server removed from config
		{"survival", "mc.example.net:25570"},
	} {
		if err := s.Set(e[0], e[1], true); err != nil {
			t.Fatal(err)
		}
	}
	rt := newFakeRuntime()
	dropped := s.Replay(rt, time.Now())
	if strings.Join(dropped, ",") != "gone 10.1.1.1:25565,lobby 10.0.0.7:25565" {
		t.Fatalf("dropped %v", dropped)
	}
	b, _ := rt.Backends("lobby", time.Now())
	if b.Backends[1].State != "draining" {
		t.Fatalf("replay did not drain lobby 10.0.0.2: %+v", b.Backends[1])
	}
	want := map[string][]string{"lobby": {"10.0.0.2:25565"}, "survival": {"mc.example.net:25570"}}
	r, _ := OpenDrainStore(dir)
	if !equalDrains(r.All(), want) || !equalDrains(s.All(), want) {
		t.Fatalf("after replay: memory %v, disk %v, want %v", s.All(), r.All(), want)
	}
}

// A drain acknowledged by the API is still there when the proxy restarts with the
// same data dir, and the new runtime gets it through Replay.
func TestDrainSurvivesRestart(t *testing.T) {
	env := newTestEnv(t)
	if status, _, body := env.call(t, "POST", "/api/v1/servers/lobby/backends/10.0.0.2%3A25565/drain", testKey, ""); status != 200 {
		t.Fatalf("drain: %d %s", status, body)
	}
	env.http.Close()
	store, err := OpenDrainStore(env.dir)
	if err != nil {
		t.Fatal(err)
	}
	fresh := newFakeRuntime()
	if dropped := store.Replay(fresh, time.Now()); len(dropped) != 0 {
		t.Fatalf("dropped %v", dropped)
	}
	b, _ := fresh.Backends("lobby", time.Now())
	if b.Backends[1].State != "draining" {
		t.Fatalf("after restart: %+v", b.Backends[1])
	}
}

// When the drain cannot be saved the API answers 500 and the runtime is untouched,
// so a 200 always means the drain survives a restart.
func TestDrainNotAppliedWhenItCannotBeSaved(t *testing.T) {
	env := newTestEnv(t)
	if err := os.RemoveAll(env.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env.dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	status, _, body := env.call(t, "POST", "/api/v1/servers/lobby/backends/10.0.0.2%3A25565/drain", testKey, "")
	if status != 500 || !strings.Contains(body, "the drain was not applied because it could not be saved") {
		t.Fatalf("%d %s", status, body)
	}
	if len(env.rt.setCalls) != 0 {
		t.Fatalf("runtime drained although the intent was not saved: %v", env.rt.setCalls)
	}
}

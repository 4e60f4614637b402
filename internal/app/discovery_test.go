package app

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery/docker/dockertest"
	"github.com/infrarust-go/infrarust/internal/discovery/kubernetes/kubetest"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

const testAPIKey = "0123456789abcdef0123456789abcdef"

// discoveryApp runs the composition root with [docker] discovery pointed at a fake
// daemon, and returns it with its admin client.
type discoveryApp struct {
	*testApp
	admin *admin.Client
	logs  *testutil.SyncBuffer
}

func startDiscoveryApp(t *testing.T, d *dockertest.Daemon, files map[string]string) *discoveryApp {
	t.Helper()
	return startAppWith(t, files, func(cfg *config.Config) {
		cfg.Docker.Enabled = true
		cfg.Docker.Endpoint = d.Endpoint()
		cfg.Docker.ReconnectDelay = config.Duration(10 * time.Millisecond)
	})
}

// startAppWith runs the composition root with files in servers_dir and the
// config changed by set.
func startAppWith(t *testing.T, files map[string]string, set func(*config.Config)) *discoveryApp {
	t.Helper()
	dir := t.TempDir()
	servers := filepath.Join(dir, "servers")
	if err := os.Mkdir(servers, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		writeServerFile(t, servers, name, body)
	}
	cfg := config.Default()
	cfg.Bind, cfg.Web.Bind = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Web.DataDir = filepath.Join(dir, "data")
	cfg.Web.RequestsPerMinute = 0
	cfg.Web.APIKey = testAPIKey
	cfg.ServersPath = servers
	cfg.StatusCache.TTL = 0
	cfg.ShutdownTimeout = config.Duration(2 * time.Second)
	set(cfg)
	loaded, errs := config.LoadServersDir(servers, cfg)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cfg.Servers = loaded
	logs := &testutil.SyncBuffer{}
	opts := Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(logs, nil)), Version: "test"}
	a, err := build(opts)
	if err != nil {
		t.Fatal(err)
	}
	type addrs struct{ proxy, admin string }
	up := make(chan addrs, 1)
	opts.Ready = func(p, ad string) { up <- addrs{p, ad} }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.run(ctx, opts) }()
	var at addrs
	select {
	case at = <-up:
	case err := <-done:
		cancel()
		t.Fatalf("app stopped before it was ready: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return within 10s of its context ending")
		}
	})
	return &discoveryApp{testApp: &testApp{App: a, proxyAddr: at.proxy, dir: servers}, admin: admin.NewClient(at.admin, testAPIKey), logs: logs}
}

// eventually polls cond (each poll is a real observation of the running app)
// until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// Docker discovery end to end: labelled containers become routable servers, a
// file wins a domain conflict, a dead container drops its server, and the proxy
// is not ready until the first list arrived.
func TestDockerDiscoveryThroughTheProxy(t *testing.T) {
	d, err := dockertest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a, b, f := startBackend(t, "a"), startBackend(t, "b"), startBackend(t, "file")
	for _, c := range []struct {
		name, addr string
	}{{"mc-lobby-1", a.Addr()}, {"mc-lobby-2", b.Addr()}} {
		ip, port := hostPort(t, c.addr)
		d.Add(dockertest.Container{Name: c.name, Networks: map[string]string{"mc": ip}, Labels: map[string]string{
			"infrarust.enable": "true", "infrarust.domains": "lobby.test", "infrarust.port": port,
			"com.docker.compose.project": "mc", "com.docker.compose.service": "lobby",
		}})
	}
	// The daemon refuses at first: the proxy runs but is not ready.
	d.Refuse(500)
	da := startDiscoveryApp(t, d, map[string]string{"survival.toml": serverFile(f.Addr(), "survival.test")})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ae *admin.APIError
	if err := da.admin.Ready(ctx); !errors.As(err, &ae) || !strings.Contains(ae.Message, "waiting for the first list of docker discovery") {
		t.Fatalf("ready before docker discovery's first list: %v", err)
	}
	d.Refuse(0)
	eventually(t, "ready once the daemon answered", func() bool { return da.admin.Ready(ctx) == nil })

	if got := da.motd(t, "lobby.test"); got != "motd a" && got != "motd b" {
		t.Fatalf("lobby.test answered %q", got)
	}
	if got := da.motd(t, "survival.test"); got != "motd file" {
		t.Fatalf("the file server answered %q", got)
	}
	lobby, err := da.admin.Backends(ctx, "docker@mc-lobby")
	if err != nil || len(lobby.Backends) != 2 || lobby.Strategy != "least_conn" {
		t.Fatalf("the two replicas of docker@mc-lobby: %+v %v", lobby, err)
	}

	// A container claiming the file's domain is left out, and said so once.
	ip, port := hostPort(t, b.Addr())
	d.Add(dockertest.Container{Name: "impostor", Networks: map[string]string{"mc": ip}, Labels: map[string]string{
		"infrarust.enable": "true", "infrarust.domains": "survival.test", "infrarust.port": port,
	}})
	eventually(t, "the conflict is logged", func() bool {
		return strings.Contains(da.logs.String(), `domain \"survival.test\" is already claimed by the file`)
	})
	if got := da.motd(t, "survival.test"); got != "motd file" {
		t.Fatalf("the file must win survival.test, got %q", got)
	}
	if _, err := da.admin.Backends(ctx, "docker@impostor"); err == nil {
		t.Fatal("the conflicting container became a server")
	}

	// A file reload keeps the discovered servers.
	writeServerFile(t, da.dir, "creative.toml", serverFile(f.Addr(), "creative.test"))
	if err := da.ReloadServers("test"); err != nil {
		t.Fatal(err)
	}
	if _, err := da.admin.Backends(ctx, "docker@mc-lobby"); err != nil {
		t.Fatalf("a servers_dir reload dropped the discovered servers: %v", err)
	}

	// Both replicas die: the server is gone, its domain unknown.
	for _, n := range []string{"mc-lobby-1", "mc-lobby-2"} {
		if err := d.SetState(n, "exited", false); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "docker@mc-lobby removed", func() bool {
		_, err := da.admin.Backends(ctx, "docker@mc-lobby")
		return err != nil
	})
	if got := da.motd(t, "lobby.test"); !strings.Contains(got, "no server is configured") {
		t.Fatalf("lobby.test after its containers died answered %q", got)
	}
	if n := strings.Count(da.logs.String(), "survival.test\\\" is already claimed"); n != 1 {
		t.Errorf("the lasting conflict was logged %d times, want once", n)
	}
}

// Kubernetes discovery end to end: an annotated Service's ready endpoints are the
// server's addresses, mc-router's annotation is read, and endpoints going unready
// leave the server without addresses.
func TestKubernetesDiscoveryThroughTheProxy(t *testing.T) {
	api := kubetest.Start()
	defer api.Close()
	a, b := startBackend(t, "pod-a"), startBackend(t, "pod-b")
	ipA, portA := hostPort(t, a.Addr())
	ipB, portB := hostPort(t, b.Addr())
	pa, _ := strconv.Atoi(portA)
	pb, _ := strconv.Atoi(portB)
	api.Apply("services", kubetest.Service("mc", "lobby", map[string]string{"mc-router.itzg.me/externalServerName": "lobby.test"}, "minecraft=25565"))
	api.Apply("endpointslices", kubetest.Slice("mc", "lobby-a", "lobby", "minecraft", pa, kubetest.Endpoint{IP: ipA, Ready: true, Pod: "lobby-0"}))
	api.Apply("endpointslices", kubetest.Slice("mc", "lobby-b", "lobby", "minecraft", pb, kubetest.Endpoint{IP: ipB, Ready: true, Pod: "lobby-1"}))
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(kubetest.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	da := startAppWith(t, nil, func(cfg *config.Config) {
		cfg.Kubernetes.Enabled, cfg.Kubernetes.APIServer, cfg.Kubernetes.TokenFile, cfg.Kubernetes.Namespace = true, api.URL(), tok, "mc"
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	eventually(t, "ready after the first lists", func() bool { return da.admin.Ready(ctx) == nil })
	lobby, err := da.admin.Backends(ctx, "kubernetes@lobby.mc")
	if err != nil || len(lobby.Backends) != 2 {
		t.Fatalf("the two pods of kubernetes@lobby.mc: %+v %v", lobby, err)
	}
	if got := da.motd(t, "lobby.test"); got != "motd pod-a" && got != "motd pod-b" {
		t.Fatalf("lobby.test answered %q", got)
	}
	// Pod b goes unready: one address left, and it serves.
	api.Apply("endpointslices", kubetest.Slice("mc", "lobby-b", "lobby", "minecraft", pb, kubetest.Endpoint{IP: ipB, Ready: false, Pod: "lobby-1"}))
	eventually(t, "pod b left the rotation", func() bool {
		l, err := da.admin.Backends(ctx, "kubernetes@lobby.mc")
		return err == nil && len(l.Backends) == 1
	})
	if got := da.motd(t, "lobby.test"); got != "motd pod-a" {
		t.Fatalf("with pod b unready lobby.test answered %q", got)
	}
}

// A ConfigMap mounted as servers_dir changes a file by swapping its "..data"
// symlink (the kubelet's atomic writer); the watcher must reload on that.
func TestServersDirAsAConfigMapVolume(t *testing.T) {
	a, b := startBackend(t, "a"), startBackend(t, "b")
	da := startAppWith(t, nil, func(*config.Config) {})
	dir := da.dir
	write := func(version, addr string) {
		t.Helper()
		ts := filepath.Join(dir, "..2025_"+version)
		if err := os.Mkdir(ts, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ts, "lobby.toml"), []byte(serverFile(addr, "lobby.test")), 0o644); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink("..2025_"+version, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	write("1", a.Addr())
	if err := os.Symlink("..data/lobby.toml", filepath.Join(dir, "lobby.toml")); err != nil {
		t.Fatal(err)
	}
	// The first load is explicit, so the check below does not race the watcher's debounce.
	if err := da.ReloadServers("test"); err != nil {
		t.Fatal(err)
	}
	if got := da.motd(t, "lobby.test"); got != "motd a" {
		t.Fatalf("lobby.test answered %q", got)
	}
	write("2", b.Addr()) // only the ..data symlink changes
	eventually(t, "the ConfigMap update applied", func() bool { return da.motd(t, "lobby.test") == "motd b" })
}

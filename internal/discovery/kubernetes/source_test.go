package kubernetes_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery/kubernetes"
	"github.com/infrarust-go/infrarust/internal/discovery/kubernetes/kubetest"
	"github.com/infrarust-go/infrarust/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// connect returns [kubernetes] pointed at the fake.
func connect(t *testing.T, api *kubetest.Server) config.Kubernetes {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(kubetest.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k := config.DefaultKubernetes()
	k.Enabled, k.APIServer, k.TokenFile, k.Namespace = true, api.URL(), tok, "mc"
	return k
}

// timers fires the source's backoff waits by hand.
type timers struct {
	mu      sync.Mutex
	pending []chan time.Time
	asked   []time.Duration
}

func (tm *timers) after(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	tm.mu.Lock()
	tm.pending = append(tm.pending, ch)
	tm.asked = append(tm.asked, d)
	tm.mu.Unlock()
	return ch
}

// waitPending waits until a backoff wait is pending, without firing it.
func (tm *timers) waitPending(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		tm.mu.Lock()
		n := len(tm.pending)
		tm.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no backoff wait started")
		}
		time.Sleep(time.Millisecond) // waiting for the source to fail, not for a window
	}
}

func (tm *timers) fireAll(t *testing.T, wantAtLeast int) []time.Duration {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tm.mu.Lock()
		n := len(tm.pending)
		tm.mu.Unlock()
		if n >= wantAtLeast {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d backoff waits started, want %d", n, wantAtLeast)
		}
		time.Sleep(time.Millisecond) // waiting for the source to fail, not for a window
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	for _, ch := range tm.pending {
		ch <- time.Now()
	}
	tm.pending = nil
	return append([]time.Duration(nil), tm.asked...)
}

type snapshots chan []*config.Server

// next waits for a snapshot and returns id -> sorted addresses.
func (s snapshots) next(t *testing.T, why string) map[string]string {
	t.Helper()
	select {
	case servers := <-s:
		out := map[string]string{}
		for _, srv := range servers {
			var a []string
			for _, x := range srv.Addresses {
				a = append(a, x.Address)
			}
			sort.Strings(a)
			out[srv.ID] = strings.Join(srv.Domains, ",") + " -> " + strings.Join(a, " ")
		}
		return out
	case <-time.After(10 * time.Second):
		t.Fatalf("no snapshot after %s", why)
		return nil
	}
}

func expect(t *testing.T, step string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %v, want %v", step, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: %s is %q, want %q (all %v)", step, k, got[k], v, got)
		}
	}
}

func TestSourceFollowsServicesAndEndpoints(t *testing.T) {
	api := kubetest.Start()
	defer api.Close()
	api.Apply("services", kubetest.Service("mc", "lobby", map[string]string{kubernetes.AnnotationDomains: "lobby.example.com"}, "minecraft=25565", "rcon=25575"))
	api.Apply("endpointslices", kubetest.Slice("mc", "lobby-abc", "lobby", "minecraft", 25565,
		kubetest.Endpoint{IP: "10.1.0.1", Ready: true, Pod: "lobby-0"},
		kubetest.Endpoint{IP: "10.1.0.2", Ready: true, Pod: "lobby-1"},
		kubetest.Endpoint{IP: "10.1.0.3", Ready: false, Pod: "lobby-2"}))
	// mc-router's annotations are read too.
	api.Apply("services", kubetest.Service("mc", "forge", map[string]string{"mc-router.itzg.me/externalServerName": "forge.example.com, modded.example.com"}, "mc=25565"))
	api.Apply("endpointslices", kubetest.Slice("mc", "forge-1", "forge", "mc", 25566, kubetest.Endpoint{IP: "10.1.1.1", Ready: true, Pod: "forge-0"}))
	// Not annotated, and another namespace: ignored.
	api.Apply("services", kubetest.Service("mc", "postgres", nil, "pg=5432"))
	api.Apply("services", kubetest.Service("other", "elsewhere", map[string]string{kubernetes.AnnotationDomains: "elsewhere.example.com"}, "minecraft=25565"))

	tm := &timers{}
	logs := &testutil.SyncBuffer{}
	src, err := kubernetes.NewSource(connect(t, api), config.Default(), kubernetes.Options{After: tm.after, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(snapshots, 32)
	done := make(chan struct{})
	go func() {
		defer close(done)
		src.Run(ctx, func(s []*config.Server) { got <- s })
	}()
	defer func() { cancel(); <-done }()

	expect(t, "first lists", got.next(t, "start"), map[string]string{
		"kubernetes@lobby.mc": "lobby.example.com -> 10.1.0.1:25565 10.1.0.2:25565",
		"kubernetes@forge.mc": "forge.example.com,modded.example.com -> 10.1.1.1:25566",
	})

	// A pod becomes ready, another stops being ready.
	api.Apply("endpointslices", kubetest.Slice("mc", "lobby-abc", "lobby", "minecraft", 25565,
		kubetest.Endpoint{IP: "10.1.0.1", Ready: false, Pod: "lobby-0"},
		kubetest.Endpoint{IP: "10.1.0.2", Ready: true, Pod: "lobby-1"},
		kubetest.Endpoint{IP: "10.1.0.3", Ready: true, Pod: "lobby-2"}))
	expect(t, "readiness changed", got.next(t, "slice update"), map[string]string{
		"kubernetes@lobby.mc": "lobby.example.com -> 10.1.0.2:25565 10.1.0.3:25565",
		"kubernetes@forge.mc": "forge.example.com,modded.example.com -> 10.1.1.1:25566",
	})

	// The server closes the watches (timeoutSeconds): the informers watch again from
	// their version, without a relist, and see what happened meanwhile.
	lists := countLists(api)
	waitWatches(t, api)
	api.CloseWatches()
	api.Apply("services", kubetest.Service("mc", "survival", map[string]string{kubernetes.AnnotationDomains: "survival.example.com", "mc-router.itzg.me/defaultServer": "true"}, "minecraft=25565"))
	expect(t, "a new Service while the watches reopened", got.next(t, "service added"), map[string]string{
		"kubernetes@lobby.mc":    "lobby.example.com -> 10.1.0.2:25565 10.1.0.3:25565",
		"kubernetes@forge.mc":    "forge.example.com,modded.example.com -> 10.1.1.1:25566",
		"kubernetes@survival.mc": "survival.example.com,* -> ",
	})
	if n := countLists(api); n != lists {
		t.Errorf("a closed watch caused %d relists; it must resume from its resourceVersion", n-lists)
	}

	// History compacted while the watches were away: 410 Gone, relist, no backoff.
	waitWatches(t, api)
	api.Compact()
	api.Delete("services", "mc", "forge")
	expect(t, "relist after 410", got.next(t, "service deleted"), map[string]string{
		"kubernetes@lobby.mc":    "lobby.example.com -> 10.1.0.2:25565 10.1.0.3:25565",
		"kubernetes@survival.mc": "survival.example.com,* -> ",
	})
	if n := countLists(api); n <= lists {
		t.Error("a 410 Gone must relist")
	}

	// The API server refuses (RBAC removed): the last servers stay, the informers
	// back off with a doubling delay, and pick up what changed once allowed again.
	waitWatches(t, api)
	api.Forbid("GET", "/api/v1/namespaces/mc/services", true)
	api.CloseWatches()
	tm.fireAll(t, 1) // the watch was refused: retry after reconnect_delay
	api.Delete("services", "mc", "survival")
	tm.waitPending(t) // the relist was refused too: a longer wait started
	api.Forbid("GET", "/api/v1/namespaces/mc/services", false)
	if asked := tm.fireAll(t, 1); len(asked) != 2 || asked[1] != 2*asked[0] {
		t.Errorf("backoff waits %v, want doubling from reconnect_delay", asked)
	}
	expect(t, "after the API allowed again", got.next(t, "recovery"), map[string]string{
		"kubernetes@lobby.mc": "lobby.example.com -> 10.1.0.2:25565 10.1.0.3:25565",
	})
	if out := logs.String(); strings.Count(out, "list/watch failed") != 1 || !strings.Contains(out, "lacks this right") || !strings.Contains(out, "listing again") {
		t.Errorf("a failure is logged once with the RBAC hint, and its end once:\n%s", out)
	}
}

// waitWatches waits for both informers' watches to be open.
func waitWatches(t *testing.T, api *kubetest.Server) {
	t.Helper()
	if err := api.WaitWatches(2); err != nil {
		t.Fatal(err)
	}
}

func countLists(api *kubetest.Server) int {
	n := 0
	for _, c := range api.Calls() {
		if strings.HasPrefix(c, "GET ") && !strings.Contains(c, "watch=1") {
			n++
		}
	}
	return n
}

func TestServicesToServers(t *testing.T) {
	svc := func(ann map[string]string, ports ...kubernetes.ServicePort) kubernetes.Service {
		var s kubernetes.Service
		s.Metadata = kubernetes.ObjectMeta{Name: "survival", Namespace: "mc", Annotations: ann}
		s.Spec.Ports = ports
		return s
	}
	mc := kubernetes.ServicePort{Name: "minecraft", Port: 25565, Protocol: "TCP"}
	cases := []struct {
		name    string
		svc     kubernetes.Service
		want    string // "" means a problem containing problem
		problem string
		check   func(t *testing.T, s *config.Server)
	}{
		{"scale to zero", svc(map[string]string{kubernetes.AnnotationDomains: "s.example.com", kubernetes.AnnotationWorkload: "statefulset/survival", kubernetes.AnnotationShutdownAfter: "10m", kubernetes.AnnotationReplicas: "1"}, mc),
			"survival.mc.svc:25565", "", func(t *testing.T, s *config.Server) {
				sm := s.ServerManager
				if sm == nil || sm.Type != "kubernetes" || sm.Workload != "statefulset/survival" || sm.Namespace != "mc" || sm.ShutdownAfter.D() != 10*time.Minute || sm.Replicas != 1 {
					t.Errorf("server_manager %+v", sm)
				}
			}},
		{"port by annotation", svc(map[string]string{kubernetes.AnnotationDomains: "s.example.com", kubernetes.AnnotationPort: "25570", kubernetes.AnnotationWorkload: "deployment/x"},
			kubernetes.ServicePort{Name: "query", Port: 25565}, kubernetes.ServicePort{Name: "game", Port: 25570}), "survival.mc.svc:25570", "", nil},
		{"modes", svc(map[string]string{kubernetes.AnnotationDomains: "s.example.com", kubernetes.AnnotationProxyMode: "server_only", kubernetes.AnnotationSendProxyProtocol: "true",
			kubernetes.AnnotationBalance: "round_robin", kubernetes.AnnotationName: "Survival", kubernetes.AnnotationMOTD: "hi", kubernetes.AnnotationWorkload: "sts/survival"}, mc), "survival.mc.svc:25565", "", func(t *testing.T, s *config.Server) {
			if s.ProxyMode != "server_only" || !s.SendProxyProtocol || s.Balance != "round_robin" || s.Name != "Survival" || s.MOTD.Online.Text != "hi" {
				t.Errorf("%+v", s)
			}
		}},
		{"unknown port", svc(map[string]string{kubernetes.AnnotationDomains: "s.example.com", kubernetes.AnnotationPort: "game"}, mc), "", "infrarust.io/port \"game\" is not a port of the Service (its ports: minecraft=25565)", nil},
		{"bad workload", svc(map[string]string{kubernetes.AnnotationDomains: "s.example.com", kubernetes.AnnotationWorkload: "pod/x"}, mc), "", "infrarust.io/workload: \"pod/x\" is not", nil},
		{"bad mode", svc(map[string]string{kubernetes.AnnotationDomains: "s.example.com", kubernetes.AnnotationProxyMode: "turbo"}, mc), "", "infrarust.io/proxy-mode: \"turbo\"", nil},
		{"no ports", svc(map[string]string{kubernetes.AnnotationDomains: "s.example.com"}), "", "the Service has no ports", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			servers, problems := kubernetes.Servers(map[string]kubernetes.Service{"mc/survival": c.svc}, nil, nil)
			if c.want == "" {
				if len(servers) != 0 || len(problems) != 1 || !strings.Contains(problems[0].Msg, c.problem) {
					t.Fatalf("servers %v, problems %+v; want the problem %q", servers, problems, c.problem)
				}
				return
			}
			if len(problems) != 0 || len(servers) != 1 || len(servers[0].Addresses) != 1 || servers[0].Addresses[0].Address != c.want {
				t.Fatalf("servers %+v, problems %+v; want one address %s", servers, problems, c.want)
			}
			if servers[0].ID != "kubernetes@survival.mc" || servers[0].Discovered != "kubernetes" {
				t.Errorf("id %q origin %q", servers[0].ID, servers[0].Discovered)
			}
			if c.check != nil {
				c.check(t, servers[0])
			}
		})
	}
}

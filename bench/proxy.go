package bench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
	"github.com/infrarust-go/infrarust/internal/forward"
	"github.com/infrarust-go/infrarust/internal/proxy"
	"github.com/infrarust-go/infrarust/internal/proxy/balance"
)

// benchHost is the domain the proxy routes to the backend.
const benchHost = "bench.local"

// inProcess is an Infrarust proxy running inside mcbench.
type inProcess struct {
	p      *proxy.Proxy
	addr   string
	cancel context.CancelFunc
	done   chan struct{}
	dir    string
}

// proxySpec is what the proxy under test serves: bench.local (passthrough to the
// fakemc backend) and one server per proxy mode of the Minecraft-faithful workloads.
type proxySpec struct {
	backend       string        // fakemc's address, behind benchHost
	cacheTTL      time.Duration // status cache
	routes        []route       // the Minecraft-faithful servers
	sessionServer string        // the stand-in session server's URL ("": Mojang's, unused)
	threshold     int           // compression_threshold of the intercepted modes
	forwarder     string        // the forwarder setting ("": the configuration's default)
	webhook       string        // a deciding webhook's URL, asked about every login ("": none)
	telemetry     string        // an OTLP/HTTP endpoint every session is traced to ("": tracing off)
}

// route is one server of the proxy: a domain, its proxy_mode and its one backend.
type route struct {
	id, host, mode, backend string
}

// routeBackend is the backend of the spec's route in mode ("" when it has none).
func (s proxySpec) routeBackend(mode string) string {
	for _, r := range s.routes {
		if r.mode == mode {
			return r.backend
		}
	}
	return ""
}

// servers is every server of the spec, bench.local first.
func (s proxySpec) servers() []route {
	return append([]route{{id: "bench", host: benchHost, mode: "passthrough", backend: s.backend}}, s.routes...)
}

// benchConfig is the configuration every proxied workload runs with: one address
// per server, rate limiting off (every client is 127.0.0.1), status cache per flag.
func benchConfig(spec proxySpec, serversDir string) *config.Config {
	cfg := config.Default()
	cfg.Bind = "127.0.0.1:0"
	cfg.ServersPath = serversDir
	cfg.ConnectTimeout = config.Duration(5 * time.Second)
	cfg.RateLimit.Enabled = false
	cfg.MaxConnectionsPerIP = 0
	cfg.ActiveHealth.Enabled = false
	cfg.Web.Enabled = false
	cfg.StatusCache.TTL = config.Duration(spec.cacheTTL)
	cfg.CompressionThreshold = spec.threshold
	if spec.sessionServer != "" {
		cfg.Auth.SessionServer = spec.sessionServer
	}
	if spec.forwarder != "" {
		cfg.Forwarder = forward.Kind(spec.forwarder)
	}
	for _, r := range spec.servers() {
		cfg.Servers = append(cfg.Servers, &config.Server{
			ID: r.id, File: r.id + ".toml", Domains: []string{r.host},
			Addresses: []config.Address{{Address: r.backend, Weight: 1}},
			Balance:   balance.FirstAvailable, SlowStartAggression: 1,
			ProxyMode: config.ProxyMode(r.mode), DomainRewrite: config.DomainRewrite{Mode: config.RewriteNone},
			DisconnectMessage: "unreachable", FullKickPatterns: config.DefaultFullKickPatterns,
		})
	}
	return cfg
}

func startInProcess(spec proxySpec) (*inProcess, error) {
	dir, err := os.MkdirTemp("", "mcbench-servers-")
	if err != nil {
		return nil, err
	}
	p, err := proxy.New(proxy.Options{
		Config: benchConfig(spec, dir),
		Logger: slog.New(slog.DiscardHandler),
		Bus:    events.NewBus(),
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("build proxy: %w", err)
	}
	// The players' listener as serve opens it (deferred accept, inherited keepalive).
	ln, err := proxy.Listen(context.Background(), "127.0.0.1:0", benchConfig(spec, dir).Keepalive)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ip := &inProcess{p: p, addr: ln.Addr().String(), cancel: cancel, done: make(chan struct{}), dir: dir}
	// RunBackground (prober, servers_dir watcher, limiter sweep) is left out: it is
	// off the data path, and the watcher would reload the empty temp servers dir.
	// Every goroutine the proxy starts inherits this label, so a CPU profile of
	// the whole run can be cut down to the proxy: pprof -tagfocus side=proxy.
	go pprof.Do(ctx, pprof.Labels("side", "proxy"), func(ctx context.Context) {
		defer close(ip.done)
		_ = p.Serve(ctx, ln)
	})
	return ip, nil
}

func (ip *inProcess) close() {
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	_ = ip.p.Shutdown(sctx)
	ip.cancel()
	<-ip.done
	os.RemoveAll(ip.dir)
}

package bench

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/events"
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

// benchConfig is the configuration every proxied workload runs with: one server,
// one address, rate limiting off (every client is 127.0.0.1), status cache per flag.
func benchConfig(backend, serversDir string, cacheTTL time.Duration) *config.Config {
	cfg := config.Default()
	cfg.Bind = "127.0.0.1:0"
	cfg.ServersPath = serversDir
	cfg.ConnectTimeout = config.Duration(5 * time.Second)
	cfg.RateLimit.Enabled = false
	cfg.MaxConnectionsPerIP = 0
	cfg.ActiveHealth.Enabled = false
	cfg.Web.Enabled = false
	cfg.StatusCache.TTL = config.Duration(cacheTTL)
	cfg.Servers = []*config.Server{{
		ID: "bench", File: "bench.toml", Domains: []string{benchHost},
		Addresses: []config.Address{{Address: backend, Weight: 1}},
		Balance:   balance.FirstAvailable, SlowStartAggression: 1,
		ProxyMode: "passthrough", DomainRewrite: config.DomainRewrite{Mode: config.RewriteNone},
		DisconnectMessage: "unreachable", FullKickPatterns: config.DefaultFullKickPatterns,
	}}
	return cfg
}

func startInProcess(backend string, cacheTTL time.Duration) (*inProcess, error) {
	dir, err := os.MkdirTemp("", "mcbench-servers-")
	if err != nil {
		return nil, err
	}
	p, err := proxy.New(proxy.Options{
		Config: benchConfig(backend, dir, cacheTTL),
		Logger: slog.New(slog.DiscardHandler),
		Bus:    events.NewBus(),
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("build proxy: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ip := &inProcess{p: p, addr: ln.Addr().String(), cancel: cancel, done: make(chan struct{}), dir: dir}
	// RunBackground (prober, servers_dir watcher, limiter sweep) is left out: it is
	// off the data path, and the watcher would reload the empty temp servers dir.
	go func() { defer close(ip.done); _ = p.Serve(ctx, ln) }()
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

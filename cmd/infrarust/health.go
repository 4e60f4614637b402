package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
	"github.com/infrarust-go/infrarust/internal/config"
)

// newHealthCmd is `infrarust health`: the container HEALTHCHECK and a quick probe for
// scripts, answered by the running proxy's readiness endpoint.
func newHealthCmd(g *globalFlags) *cobra.Command {
	var adminURL string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Exit 0 when the running proxy takes players, 1 otherwise (for HEALTHCHECK)",
		Long: `Ask the running 'infrarust serve' whether it takes players: GET /api/v1/ready on
its admin API (no key needed), found like the other commands find it (--admin-url,
$INFRARUST_ADMIN_URL, else [web] bind of --config). The proxy is not ready while it
starts and from the moment it shuts down.

With [web] enabled = false there is no readiness endpoint; the check is then a TCP
connection to the proxy's bind.

Exits 0 when ready, 1 otherwise, with the reason on stderr.`,
		Example: `  infrarust health
  infrarust health --admin-url http://127.0.0.1:8080 --timeout 2s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			url := strings.TrimSpace(adminURL)
			if url == "" {
				url = strings.TrimSpace(os.Getenv(envAdminURL))
			}
			if url == "" {
				cfg, err := g.loadProxyConfig(cmd)
				if err != nil {
					return &exitError{code: 1, err: fmt.Errorf("not healthy: %w", err)}
				}
				if !cfg.Web.Enabled {
					addr := dialableBind(cfg.Bind)
					c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
					if err != nil {
						return &exitError{code: 1, err: fmt.Errorf("not healthy: the proxy does not accept connections on %s: %w", addr, err)}
					}
					c.Close()
					fmt.Fprintf(g.stdout, "accepting connections on %s\n", addr)
					return nil
				}
				url = "http://" + dialableBind(cfg.Web.Bind)
			}
			if err := admin.NewClient(url, "").Ready(ctx); err != nil {
				return &exitError{code: 1, err: fmt.Errorf("not ready: %w", err)}
			}
			fmt.Fprintln(g.stdout, "ready")
			return nil
		},
	}
	cmd.Flags().StringVar(&adminURL, "admin-url", "", "admin API URL (default: $"+envAdminURL+", else http://<[web] bind> from --config)")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}

// loadProxyConfig reads infrarust.toml alone (with the environment over it), not
// servers_dir: a server file broken after start (which serve keeps at its previous
// version) must not turn the health check red.
func (g *globalFlags) loadProxyConfig(cmd *cobra.Command) (*config.Config, error) {
	explicit := g.resolveConfig(cmd)
	data, err := os.ReadFile(g.configPath)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return config.Parse([]byte(config.DefaultTOML), "<embedded default>")
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return config.Parse(data, g.configPath)
}

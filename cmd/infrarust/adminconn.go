package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infrarust-go/infrarust/internal/admin"
)

// Environment variables that point the CLI at a proxy's admin API.
const (
	envAdminURL = "INFRARUST_ADMIN_URL"
	envAPIKey   = "INFRARUST_API_KEY"
)

// adminConn holds the flags shared by every command that talks to a running proxy
// (backends, bans, top), so they all find it the same way.
type adminConn struct {
	url    string
	apiKey string
}

// addAdminFlags adds --admin-url and --api-key to cmd and its subcommands.
func addAdminFlags(cmd *cobra.Command) *adminConn {
	a := &adminConn{}
	pf := cmd.PersistentFlags()
	pf.StringVar(&a.url, "admin-url", "", "admin API URL (default: $"+envAdminURL+", else http://<[web] bind> from --config; without a config file, the running serve's)")
	pf.StringVar(&a.apiKey, "api-key", "", "admin API key (default: $"+envAPIKey+", else [web] api_key or <data_dir>/admin.key from --config; without a config file, the key file the running serve made)")
	return a
}

// client resolves the URL and key: flag, then environment, then the config file's
// [web] section and the key file the server generated in its data dir.
func (a *adminConn) client(cmd *cobra.Command, g *globalFlags) (*admin.Client, error) {
	url := strings.TrimSpace(a.url)
	if url == "" {
		url = strings.TrimSpace(os.Getenv(envAdminURL))
	}
	key := strings.TrimSpace(a.apiKey)
	if key == "" {
		key = strings.TrimSpace(os.Getenv(envAPIKey))
	}
	var keyFile string
	if url == "" || key == "" {
		cfg, err := g.loadConfig(cmd)
		if err != nil {
			if url == "" {
				return nil, fmt.Errorf("finding the admin API from %s: %w (or pass --admin-url and --api-key)", g.configPath, err)
			}
			// The URL is known; without a key the server's 401 says what to do.
			return admin.NewClient(url, key), nil
		}
		// Without a config file, the running serve's data_dir is relative to the
		// folder it started in: its runtime hint says where it is.
		hint, hintErr := admin.ReadRuntimeHint()
		useHint := hintErr == nil && cfg.Source == ""
		if url == "" && useHint {
			url = hint.URL
		}
		if url == "" {
			url = "http://" + dialableBind(cfg.Web.Bind)
		}
		if key == "" && useHint && hint.KeyFile != "" {
			if data, err := os.ReadFile(hint.KeyFile); err == nil {
				key, keyFile = strings.TrimSpace(string(data)), hint.KeyFile
			}
		}
		if key == "" {
			key = strings.TrimSpace(cfg.Web.APIKey)
		}
		dir := cfg.Web.DataDir
		if dir == "" {
			dir = "."
		}
		if keyFile == "" {
			keyFile = filepath.Join(dir, admin.KeyFileName)
			if abs, err := filepath.Abs(keyFile); err == nil {
				keyFile = abs
			}
		}
		if key == "" {
			data, err := os.ReadFile(keyFile)
			switch {
			case err == nil:
				key = strings.TrimSpace(string(data))
			case errors.Is(err, fs.ErrPermission):
				return nil, fmt.Errorf("cannot read the admin key %s: %w (run as the proxy's user, or set %s / --api-key)", keyFile, err, envAPIKey)
			}
			// A missing file is not an error here: the server answers 401 with the fix.
		}
	}
	c := admin.NewClient(url, key)
	if keyFile != "" {
		c.SetKeyFileHint(keyFile)
	}
	return c, nil
}

// dialableBind turns a listen address into one a client can connect to: a wildcard
// host (0.0.0.0, ::, empty) means this machine's loopback.
func dialableBind(bind string) string {
	if bind == "" {
		return "127.0.0.1:8080"
	}
	host, port, err := net.SplitHostPort(bind)
	if err != nil {
		return bind
	}
	if host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		if ip.Is6() && !ip.Is4In6() {
			return net.JoinHostPort("::1", port)
		}
		return net.JoinHostPort("127.0.0.1", port)
	}
	return bind
}

// addOutputFlag adds -o table|json to a command group that prints API answers and
// checks it once, before any subcommand runs.
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.PersistentFlags().StringVarP(output, "output", "o", "table", "output format: table or json")
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error { return checkOutput(*output) }
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))
}

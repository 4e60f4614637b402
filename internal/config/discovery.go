package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// Docker is [docker]: discover servers from the labels of running containers
// (docs/containers.md), and how the proxy reaches the Docker Engine API, which the
// "docker" server manager uses too.
type Docker struct {
	// Enabled turns label discovery on; a [docker] table written without it turns
	// it on, as in the Rust Infrarust.
	Enabled bool `toml:"enabled"`
	// Endpoint is unix:///path, tcp://host:port (http, or https with the tls_* files),
	// http:// or https://.
	Endpoint string `toml:"endpoint"`
	// Network is the Docker network whose IP a container is reached at when it has several.
	Network string `toml:"network"`
	// PollInterval re-lists the containers even when the event stream is quiet.
	PollInterval Duration `toml:"poll_interval"`
	// ReconnectDelay is the first wait after the daemon is lost; it doubles up to a minute.
	ReconnectDelay Duration `toml:"reconnect_delay"`
	// TLSCA, TLSCert and TLSKey are PEM files for a daemon behind TLS (ca.pem,
	// cert.pem, key.pem of DOCKER_CERT_PATH); relative to infrarust.toml's folder.
	TLSCA   string `toml:"tls_ca"`
	TLSCert string `toml:"tls_cert"`
	TLSKey  string `toml:"tls_key"`
}

// DefaultDocker is [docker] as the defaults leave it.
func DefaultDocker() Docker {
	return Docker{
		Endpoint:       "unix:///var/run/docker.sock",
		PollInterval:   Duration(30 * time.Second),
		ReconnectDelay: Duration(5 * time.Second),
	}
}

// Kubernetes is [kubernetes]: discover servers from annotated Services and their
// ready endpoints (docs/kubernetes.md), and how the proxy reaches the API server,
// which the "kubernetes" server manager uses too.
type Kubernetes struct {
	// Enabled turns Service discovery on; a [kubernetes] table written without it
	// turns it on.
	Enabled bool `toml:"enabled"`
	// Namespace is where Services are watched: "" is the proxy's own namespace (from
	// its service account), "*" every namespace (needs a ClusterRole).
	Namespace string `toml:"namespace"`
	// LabelSelector narrows the watched Services (e.g. "app.kubernetes.io/part-of=mc").
	LabelSelector string `toml:"label_selector"`
	// APIServer, TokenFile and CAFile reach the API server; "" means in-cluster
	// (KUBERNETES_SERVICE_HOST and the pod's service account files).
	APIServer string `toml:"api_server"`
	TokenFile string `toml:"token_file"`
	CAFile    string `toml:"ca_file"`
	// ReconnectDelay is the first wait after a failed list or watch; it doubles up to a minute.
	ReconnectDelay Duration `toml:"reconnect_delay"`
}

// DefaultKubernetes is [kubernetes] as the defaults leave it.
func DefaultKubernetes() Kubernetes {
	return Kubernetes{ReconnectDelay: Duration(5 * time.Second)}
}

// validateDiscovery turns on the discovery tables that are written (m is the parsed
// file) and checks them.
// enableWrittenDiscovery turns on a [docker] or [kubernetes] table written
// without enabled, as in the Rust Infrarust; it runs before the environment
// applies, so INFRARUST_DOCKER=false still wins over the file.
func (c *Config) enableWrittenDiscovery(m map[string]any) {
	enableWritten := func(table string, enabled *bool) {
		t, ok := m[table].(map[string]any)
		if !ok {
			return
		}
		if _, set := t["enabled"]; !set {
			*enabled = true
		}
	}
	enableWritten("docker", &c.Docker.Enabled)
	enableWritten("kubernetes", &c.Kubernetes.Enabled)
}

func (c *Config) validateDiscovery(r *report, m map[string]any) {
	d := &c.Docker
	if err := CheckDockerEndpoint(d.Endpoint); err != nil {
		r.check("docker.endpoint", "%v", err)
	}
	if d.PollInterval < 0 {
		r.check("docker.poll_interval", "must be 0 (events only) or more")
	}
	if d.ReconnectDelay <= 0 {
		r.check("docker.reconnect_delay", "must be more than 0")
	}
	if (d.TLSCert == "") != (d.TLSKey == "") {
		r.check("docker", "tls_cert and tls_key go together (the client certificate and its key)")
	}
	dir := configDir(c.Source)
	for _, p := range []*string{&d.TLSCA, &d.TLSCert, &d.TLSKey} {
		*p = resolvePath(*p, dir)
	}

	k := &c.Kubernetes
	if k.ReconnectDelay <= 0 {
		r.check("kubernetes.reconnect_delay", "must be more than 0")
	}
	if k.APIServer != "" {
		if u, err := url.Parse(k.APIServer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			r.check("kubernetes.api_server", "%q is not an http(s) URL like https://10.0.0.1:6443", k.APIServer)
		}
	}
	if strings.ContainsAny(k.Namespace, " /") {
		r.check("kubernetes.namespace", "%q is not a namespace name (or \"*\" for every namespace)", k.Namespace)
	}
	k.TokenFile, k.CAFile = resolvePath(k.TokenFile, dir), resolvePath(k.CAFile, dir)
}

// CheckDockerEndpoint accepts the endpoints the Engine API client can dial.
func CheckDockerEndpoint(endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("%q is not an endpoint: %v", endpoint, err)
	}
	switch u.Scheme {
	case "unix":
		if u.Path == "" {
			return fmt.Errorf("%q has no socket path (unix:///var/run/docker.sock)", endpoint)
		}
	case "tcp", "http", "https":
		if u.Host == "" {
			return fmt.Errorf("%q has no host:port (tcp://docker-host:2376)", endpoint)
		}
	default:
		return fmt.Errorf("%q: use unix:///path/to/docker.sock, tcp://host:port, http:// or https://", endpoint)
	}
	return nil
}

// resolvePath makes a relative path relative to dir (infrarust.toml's folder).
func resolvePath(p, dir string) string {
	if p == "" || dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

package config

import (
	"strings"
	"testing"
)

func TestDiscoveryTablesTurnOnWhenWritten(t *testing.T) {
	clearEnv(t)
	cases := []struct {
		src          string
		docker, kube bool
		endpoint, ns string
		wantErr      string
	}{
		{src: "", endpoint: "unix:///var/run/docker.sock"},
		{src: "[docker]\n", docker: true, endpoint: "unix:///var/run/docker.sock"},
		{src: "[docker]\nenabled = false\nendpoint = \"tcp://h:2375\"\n", endpoint: "tcp://h:2375"},
		{src: "[docker]\nnetwork = \"minecraft\"\n[kubernetes]\nnamespace = \"mc\"\n", docker: true, kube: true, endpoint: "unix:///var/run/docker.sock", ns: "mc"},
		{src: "[kubernetes]\nenabled = true\n", kube: true, endpoint: "unix:///var/run/docker.sock"},
		{src: "[docker]\nendpoint = \"npipe:////./pipe/docker_engine\"\n", wantErr: "f.toml:2: docker.endpoint: \"npipe:////./pipe/docker_engine\": use unix:///path/to/docker.sock"},
		{src: "[docker]\nendpoint = \"tcp://\"\n", wantErr: "has no host:port"},
		{src: "[docker]\ntls_cert = \"c.pem\"\n", wantErr: "tls_cert and tls_key go together"},
		{src: "[docker]\nreconnect_delay = \"0\"\n", wantErr: "docker.reconnect_delay: must be more than 0"},
		{src: "[kubernetes]\napi_server = \"10.0.0.1:6443\"\n", wantErr: "kubernetes.api_server: \"10.0.0.1:6443\" is not an http(s) URL"},
		{src: "[kubernetes]\nnamespace = \"a b\"\n", wantErr: "kubernetes.namespace"},
		{src: "[docker]\npoll_intervall = \"1s\"\n", wantErr: "did you mean poll_interval?"},
	}
	for _, c := range cases {
		cfg, err := Parse([]byte(c.src), "f.toml")
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: error %v, want %q", c.src, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if cfg.Docker.Enabled != c.docker || cfg.Kubernetes.Enabled != c.kube || cfg.Docker.Endpoint != c.endpoint || cfg.Kubernetes.Namespace != c.ns {
			t.Errorf("%q: docker %v (%s), kubernetes %v (%q)", c.src, cfg.Docker.Enabled, cfg.Docker.Endpoint, cfg.Kubernetes.Enabled, cfg.Kubernetes.Namespace)
		}
	}
}

func TestNewManagerTypes(t *testing.T) {
	base := "domains = [\"d.example\"]\naddresses = [\"10.0.0.1\"]\n[server_manager]\n"
	cases := []struct {
		body, wantErr string
	}{
		{"type = \"docker\"\ncontainer = \"mc-survival\"\n", ""},
		{"type = \"docker\"\ncontainer = \"3f4e5d6c7b8a\"\nendpoint = \"tcp://docker:2375\"\n", ""},
		{"type = \"docker\"\n", "type \"docker\" needs container"},
		{"type = \"docker\"\ncontainer = \"a b\"\n", "server_manager.container: \"a b\" is not a container name"},
		{"type = \"docker\"\ncontainer = \"x\"\nendpoint = \"ftp://x\"\n", "server_manager.endpoint"},
		{"type = \"kubernetes\"\nworkload = \"statefulset/survival\"\n", ""},
		{"type = \"kubernetes\"\nworkload = \"deployment/lobby\"\nnamespace = \"mc\"\nreplicas = 3\n", ""},
		{"type = \"kubernetes\"\n", "needs workload"},
		{"type = \"kubernetes\"\nworkload = \"pod/x\"\n", "server_manager.workload: \"pod/x\" is not"},
		{"type = \"kubernetes\"\nworkload = \"sts/Upper\"\n", "is not \"statefulset/NAME\""},
		{"type = \"kubernetes\"\nworkload = \"sts/x\"\nreplicas = 5000\n", "server_manager.replicas: must be from 1 to 1000"},
		{"type = \"crafty\"\nurl = \"https://crafty:8443\"\nserver_id = \"1\"\napi_key = \"env:CRAFTY_TOKEN\"\n", ""},
		{"type = \"crafty\"\nurl = \"crafty:8443\"\nserver_id = \"1\"\napi_key = \"k\"\n", "server_manager.url"},
		{"type = \"crafty\"\nurl = \"https://crafty\"\napi_key = \"k\"\n", "needs server_id"},
		{"type = \"crafty\"\nurl = \"https://crafty\"\nserver_id = \"1\"\n", "needs api_key"},
		{"type = \"systemd\"\n", "\"systemd\" is not one of local, pterodactyl, crafty, docker, kubernetes"},
	}
	for _, c := range cases {
		s, err := ParseServer([]byte(base+c.body), "s.toml", nil)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: error %v, want %q", c.body, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.body, err)
			continue
		}
		if s.ServerManager.Replicas < 1 {
			t.Errorf("%q: replicas %d, want the default 1 or more", c.body, s.ServerManager.Replicas)
		}
	}
	for _, w := range []struct{ in, res, name string }{{"statefulset/a", "statefulsets", "a"}, {"STS/mc-1", "statefulsets", "mc-1"}, {"deploy/x.y", "deployments", "x.y"}} {
		res, name, ok := ParseWorkload(w.in)
		if !ok || res != w.res || name != w.name {
			t.Errorf("ParseWorkload(%q) = %q %q %v", w.in, res, name, ok)
		}
	}
}

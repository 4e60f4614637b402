// Package deploy holds the container and Kubernetes deployment files; its tests
// check what can be checked without a Docker daemon or a cluster: the Dockerfiles'
// runtime layout, the compose example and its labels, the manifests and the Helm
// chart (helm_test.go).
package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery/docker"
)

// instruction is one Dockerfile instruction with its continuation lines joined.
type instruction struct {
	cmd, args string
	line      int
}

// parseDockerfile splits a Dockerfile into instructions: comments dropped,
// backslash continuations joined. BuildKit's parser was run on both files by hand
// (see docs/containers.md, "What was tested"); this keeps the runtime contract.
func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.Join(strings.Fields(args), " "), start})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("%s ends inside a continued line", path)
	}
	return out
}

// finalStage is the instructions after the last FROM.
func finalStage(ins []instruction) []instruction {
	last := 0
	for i, in := range ins {
		if in.cmd == "FROM" {
			last = i
		}
	}
	return ins[last:]
}

func TestDockerfilesKeepTheRuntimeContract(t *testing.T) {
	var runtimes [][]string
	for _, path := range []string{"Dockerfile", "goreleaser.Dockerfile"} {
		t.Run(path, func(t *testing.T) {
			ins := parseDockerfile(t, path)
			final := finalStage(ins)
			if final[0].args != "scratch" {
				t.Errorf("the runtime stage starts FROM %q, want scratch (a static binary needs nothing else)", final[0].args)
			}
			want := map[string]func(string) bool{
				"USER":   func(a string) bool { return a == "65532:65532" },
				"VOLUME": func(a string) bool { return strings.Contains(a, `"/data"`) },
				"EXPOSE": func(a string) bool {
					return slices.Contains(strings.Fields(a), "25565") && slices.Contains(strings.Fields(a), "8080")
				},
				"HEALTHCHECK": func(a string) bool { return strings.Contains(a, `CMD ["/usr/local/bin/infrarust", "health"]`) },
				"ENTRYPOINT":  func(a string) bool { return a == `["/usr/local/bin/infrarust"]` },
				"CMD":         func(a string) bool { return a == `["serve"]` },
				"ENV":         func(a string) bool { return a == "INFRARUST_CONFIG=/etc/infrarust/infrarust.toml" },
				"WORKDIR":     func(a string) bool { return a == "/data" },
			}
			var runtime []string
			for _, in := range final {
				if check, ok := want[in.cmd]; ok {
					if !check(in.args) {
						t.Errorf("line %d: %s %s breaks the runtime contract", in.line, in.cmd, in.args)
					}
					delete(want, in.cmd)
				}
				if in.cmd != "COPY" && in.cmd != "ARG" && in.cmd != "FROM" {
					runtime = append(runtime, in.cmd+" "+in.args)
				}
			}
			for cmd := range want {
				t.Errorf("the runtime stage has no %s", cmd)
			}
			runtimes = append(runtimes, runtime)
			var layout string
			for _, in := range ins {
				if in.cmd == "RUN" && strings.Contains(in.args, "/out/etc/passwd") {
					layout = in.args
				}
			}
			for _, need := range []string{"ca-certificates.crt", "infrarust:x:65532:65532", "chown -R 65532:65532 /out/data", "/out/etc/infrarust/servers"} {
				if !strings.Contains(layout, need) {
					t.Errorf("the layout step lacks %q", need)
				}
			}
		})
	}
	if len(runtimes) == 2 && !slices.Equal(runtimes[0], runtimes[1]) {
		t.Errorf("the source-built and the release image differ at run time:\n%q\n%q", runtimes[0], runtimes[1])
	}
	build := parseDockerfile(t, "Dockerfile")
	static := false
	for _, in := range build {
		static = static || (in.cmd == "RUN" && strings.Contains(in.args, "CGO_ENABLED=0") && strings.Contains(in.args, "-o /out/usr/local/bin/infrarust ./cmd/infrarust"))
	}
	if !static {
		t.Error("deploy/Dockerfile must build ./cmd/infrarust with CGO_ENABLED=0 (the runtime image is scratch)")
	}
	ignore, err := os.ReadFile("../.dockerignore")
	if err != nil || !strings.Contains(string(ignore), "!deploy/docker/") || !strings.Contains(string(ignore), "!internal/") || !strings.HasPrefix(strings.TrimSpace(stripComments(string(ignore))), "**") {
		t.Errorf(".dockerignore must leave everything out but the sources and deploy/docker/: %v", err)
	}
	// The classic builder (docker.io 20.10 without buildx) must build it: no
	// BuildKit syntax, no platform arguments it leaves empty.
	raw, _ := os.ReadFile("Dockerfile")
	for _, bk := range []string{"--mount=", "# syntax=", "$BUILDPLATFORM", "$TARGETOS", "$TARGETARCH", "<<"} {
		if strings.Contains(string(raw), bk) {
			t.Errorf("deploy/Dockerfile uses %q, which the classic builder does not know", bk)
		}
	}
}

func stripComments(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The image's own infrarust.toml loads, with the container paths.
func TestImageConfigLoads(t *testing.T) {
	for _, v := range config.EnvOverrides {
		t.Setenv(v.Name, "")
		t.Setenv(v.Name+"_FILE", "")
	}
	data, err := os.ReadFile("docker/infrarust.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data, "docker/infrarust.toml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Bind != "0.0.0.0:25565" || cfg.ServersDir != "/etc/infrarust/servers" || cfg.Web.DataDir != "/data" || !config.IsLoopbackBind(cfg.Web.Bind) {
		t.Errorf("image config: bind %s, servers_dir %s, data_dir %s, admin %s", cfg.Bind, cfg.ServersDir, cfg.Web.DataDir, cfg.Web.Bind)
	}
	// The documented way to open the admin API: bind from the environment, key from a secret file.
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INFRARUST_ADMIN_BIND", "0.0.0.0:8080")
	t.Setenv("INFRARUST_API_KEY_FILE", key)
	if _, err := config.Parse(data, "docker/infrarust.toml"); err != nil {
		t.Errorf("admin API opened as docs/containers.md says: %v", err)
	}
}

// composeFile is the part of a compose file the example relies on.
type composeFile struct {
	Name     string `yaml:"name"`
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Ports       []string          `yaml:"ports"`
		Volumes     []string          `yaml:"volumes"`
		GroupAdd    []string          `yaml:"group_add"`
		Labels      map[string]string `yaml:"labels"`
		Environment map[string]string `yaml:"environment"`
		Networks    []string          `yaml:"networks"`
	} `yaml:"services"`
	Networks map[string]struct {
		Name string `yaml:"name"`
	} `yaml:"networks"`
}

func TestComposeExample(t *testing.T) {
	dir := "../examples/compose"
	data, err := os.ReadFile(filepath.Join(dir, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	proxy, ok := c.Services["infrarust"]
	if !ok || !slices.Contains(proxy.Ports, "25565:25565") || len(proxy.GroupAdd) == 0 ||
		!slices.Contains(proxy.Volumes, "/var/run/docker.sock:/var/run/docker.sock:ro") || !slices.Contains(proxy.Volumes, "./infrarust:/etc/infrarust:ro") {
		t.Fatalf("the proxy service must publish 25565, mount the socket read-only with its group, and mount ./infrarust: %+v", proxy)
	}

	for _, v := range config.EnvOverrides {
		t.Setenv(v.Name, "")
		t.Setenv(v.Name+"_FILE", "")
	}
	// The mounted config, with its container paths pointed back at the example.
	servers, err := filepath.Abs(filepath.Join(dir, "infrarust", "servers"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("INFRARUST_SERVERS_DIR", servers)
	t.Setenv("INFRARUST_DATA_DIR", t.TempDir())
	cfg, err := config.Load(filepath.Join(dir, "infrarust", "infrarust.toml"), true)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Docker.Enabled || cfg.Docker.Network == "" {
		t.Fatalf("the example's infrarust.toml must turn [docker] discovery on with a network: %+v", cfg.Docker)
	}
	network := ""
	for key, n := range c.Networks {
		if n.Name == cfg.Docker.Network || key == cfg.Docker.Network {
			network = key
		}
	}
	if network == "" {
		t.Fatalf("[docker] network %q is not a network of compose.yaml", cfg.Docker.Network)
	}

	// Every Minecraft service is the itzg image with the EULA accepted, on that
	// network, and its labels make a server; the lobby scales to two replicas.
	var containers []docker.Container
	mc := 0
	for name, svc := range c.Services {
		if name == "infrarust" {
			continue
		}
		mc++
		if !strings.HasPrefix(svc.Image, "itzg/minecraft-server") || svc.Environment["EULA"] != "TRUE" || !slices.Contains(svc.Networks, network) {
			t.Errorf("service %s: image %q, EULA %q, networks %v", name, svc.Image, svc.Environment["EULA"], svc.Networks)
		}
		replicas := 1
		if name == "lobby" {
			replicas = 2
		}
		for i := 1; i <= replicas; i++ {
			ct := docker.Container{ID: name + string(rune('0'+i)), Names: []string{"/" + c.Name + "-" + name + "-" + string(rune('0'+i))}, Labels: map[string]string{
				"com.docker.compose.project": c.Name, "com.docker.compose.service": name,
			}}
			for k, v := range svc.Labels {
				ct.Labels[k] = v
			}
			ct.NetworkSettings.Networks = map[string]docker.Network{cfg.Docker.Network: {IPAddress: "172.30.0." + string(rune('1'+len(containers)))}}
			containers = append(containers, ct)
		}
	}
	if mc != 2 {
		t.Errorf("the example has %d Minecraft servers, want 2", mc)
	}
	found := map[string]int{}
	discovered, problems := docker.Servers(containers, cfg.Docker.Network, cfg)
	if len(problems) > 0 {
		t.Fatalf("the example's labels have problems: %+v", problems)
	}
	for _, s := range discovered {
		found[s.ID] = len(s.Addresses)
	}
	if found["docker@mc-lobby"] != 2 || found["docker@survival"] != 1 || len(found) != 2 {
		t.Fatalf("servers from the example's labels (lobby scaled to 2): %v", found)
	}
}

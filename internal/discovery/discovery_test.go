package discovery

import (
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
)

func srv(id, origin string, domains ...string) *config.Server {
	file := "servers/" + id + ".toml"
	if origin != "" {
		file = origin + " " + id
	}
	return &config.Server{ID: id, File: file, Discovered: origin, Domains: domains}
}

func ids(servers []*config.Server) string {
	var out []string
	for _, s := range servers {
		out = append(out, s.ID)
	}
	return strings.Join(out, ",")
}

func TestMergeFileWins(t *testing.T) {
	files := []*config.Server{srv("lobby", "", "lobby.example.com"), srv("survival", "", "survival.example.com")}
	cases := []struct {
		name      string
		found     []*config.Server
		want      string
		conflicts []string
	}{
		{"no conflict", []*config.Server{srv("docker@creative", "docker", "creative.example.com")}, "docker@creative,lobby,survival", nil},
		{"a domain a file claims", []*config.Server{srv("docker@lobby2", "docker", "new.example.com", "lobby.example.com")}, "lobby,survival",
			[]string{`docker docker@lobby2: domain "lobby.example.com" is already claimed by the file servers/lobby.toml`}},
		{"an id a file has", []*config.Server{{ID: "lobby", File: "kubernetes svc", Discovered: "kubernetes", Domains: []string{"x.example.com"}}}, "lobby,survival",
			[]string{`server id "lobby" is already taken by servers/lobby.toml`}},
		{"two sources, one domain: the first id keeps it", []*config.Server{
			srv("kubernetes@mc/creative", "kubernetes", "creative.example.com"),
			srv("docker@creative", "docker", "creative.example.com"),
		}, "docker@creative,lobby,survival", []string{`domain "creative.example.com" is already claimed by server docker@creative`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			merged, conflicts := Merge(files, c.found)
			if ids(merged) != c.want {
				t.Fatalf("merged %s, want %s", ids(merged), c.want)
			}
			if len(conflicts) != len(c.conflicts) {
				t.Fatalf("conflicts %v, want %v", conflicts, c.conflicts)
			}
			for i, w := range c.conflicts {
				if !strings.Contains(conflicts[i].Error(), w) {
					t.Errorf("conflict %q, want it to contain %q", conflicts[i], w)
				}
			}
		})
	}
}

func TestSetReportsAConflictOnceWhileItLasts(t *testing.T) {
	files := []*config.Server{srv("lobby", "", "lobby.example.com")}
	set := NewSet()
	set.Update("docker", []*config.Server{srv("docker@x", "docker", "lobby.example.com")})
	if _, fresh := set.Merge(files); len(fresh) != 1 {
		t.Fatalf("first merge: %v", fresh)
	}
	if _, fresh := set.Merge(files); len(fresh) != 0 {
		t.Fatalf("the same conflict again: %v", fresh)
	}
	set.Update("docker", []*config.Server{srv("docker@x", "docker", "x.example.com")})
	if merged, fresh := set.Merge(files); len(fresh) != 0 || ids(merged) != "docker@x,lobby" {
		t.Fatalf("conflict gone: %s %v", ids(merged), fresh)
	}
	set.Update("docker", []*config.Server{srv("docker@x", "docker", "lobby.example.com")})
	if _, fresh := set.Merge(files); len(fresh) != 1 {
		t.Fatalf("a conflict that came back is fresh again: %v", fresh)
	}
	set.Update("kubernetes", []*config.Server{srv("kubernetes@default/y", "kubernetes", "y.example.com")})
	if got := ids(set.Servers()); got != "docker@x,kubernetes@default/y" {
		t.Fatalf("servers of both sources: %s", got)
	}
}

func TestBuildNamesTheLabel(t *testing.T) {
	label := func(key string) string {
		if strings.HasPrefix(key, "domains") {
			return "infrarust.domains"
		}
		return ""
	}
	s, err := Build("docker", "docker@a", "docker container a", map[string]any{"domains": []string{"a.example.com"}, "addresses": []any{"10.0.0.1:25565"}}, nil, label)
	if err != nil || s.ID != "docker@a" || s.File != "docker container a" || s.Discovered != "docker" || s.Addresses[0].Address != "10.0.0.1:25565" {
		t.Fatalf("%+v %v", s, err)
	}
	_, err = Build("docker", "docker@b", "docker container b", map[string]any{"domains": []string{"no spaces please"}, "addresses": []any{"10.0.0.1"}}, nil, label)
	if err == nil || err.Error() != `docker container b: infrarust.domains: "no spaces please" is not a hostname or wildcard pattern` {
		t.Fatalf("error %v", err)
	}
}

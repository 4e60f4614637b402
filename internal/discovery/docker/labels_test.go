package docker

import (
	"slices"
	"strings"
	"testing"

	"github.com/infrarust-go/infrarust/internal/config"
)

func ctr(name string, labels map[string]string, nets map[string]string) Container {
	c := Container{ID: name + "-id", Names: []string{"/" + name}, Labels: labels, State: "running"}
	c.NetworkSettings.Networks = map[string]Network{}
	for n, ip := range nets {
		c.NetworkSettings.Networks[n] = Network{IPAddress: ip}
	}
	return c
}

func byID(servers []*config.Server) map[string]*config.Server {
	m := map[string]*config.Server{}
	for _, s := range servers {
		m[s.ID] = s
	}
	return m
}

func TestLabelsToServers(t *testing.T) {
	compose := func(svc string, extra map[string]string) map[string]string {
		l := map[string]string{LabelEnable: "true", composeProject: "mc", composeService: svc}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	containers := []Container{
		// docker compose up --scale lobby=2: one server, two replicas, balanced.
		ctr("mc-lobby-2", compose("lobby", map[string]string{LabelDomains: "lobby.example.com, play.example.com", LabelWeight: "3"}), map[string]string{"mc_default": "172.18.0.3"}),
		ctr("mc-lobby-1", compose("lobby", map[string]string{LabelDomains: "lobby.example.com, play.example.com"}), map[string]string{"mc_default": "172.18.0.2"}),
		// The Rust Infrarust's labels.
		ctr("survival", map[string]string{LabelEnable: "true", LabelDomains: "survival.example.com", LabelPort: "25566",
			LabelProxyMode: "server_only", LabelSendProxyProtocol: "1", LabelName: "Survival", LabelMOTD: "§aSurvival", LabelPriority: "2"},
			map[string]string{"bridge": "172.17.0.5", "minecraft": "10.5.0.7"}),
		// No domains: <name>.docker.local, as in the Rust Infrarust.
		ctr("creative", map[string]string{LabelEnable: "True"}, map[string]string{"minecraft": "10.5.0.8"}),
		// Not enabled.
		ctr("db", map[string]string{"infrarust.enable": "false", LabelDomains: "db.example.com"}, map[string]string{"minecraft": "10.5.0.9"}),
		// No network IP: the published port on this host.
		func() Container {
			c := ctr("published", map[string]string{LabelEnable: "true", LabelDomains: "pub.example.com"}, nil)
			c.Ports = []Port{{IP: "0.0.0.0", PrivatePort: 25565, PublicPort: 30001, Type: "tcp"}}
			return c
		}(),
		// Nothing at all: its name, for Docker's DNS.
		ctr("named", map[string]string{LabelEnable: "true", LabelDomains: "named.example.com"}, nil),
	}
	servers, problems := Servers(containers, "minecraft", nil)
	if len(problems) != 0 {
		t.Fatalf("problems: %+v", problems)
	}
	got := byID(servers)
	if len(got) != 5 {
		t.Fatalf("servers: %v", servers)
	}

	lobby := got["docker@mc-lobby"]
	if lobby == nil || len(lobby.Addresses) != 2 || lobby.Balance != "least_conn" || lobby.Discovered != "docker" {
		t.Fatalf("lobby: %+v", lobby)
	}
	if a := lobby.Addresses; a[0].Address != "172.18.0.2:25565" || a[0].Weight != 1 || a[1].Address != "172.18.0.3:25565" || a[1].Weight != 3 {
		t.Errorf("lobby replicas (in container-name order, with their weights): %+v", a)
	}
	if strings.Join(lobby.Domains, ",") != "lobby.example.com,play.example.com" || lobby.File != "docker container mc-lobby-1, mc-lobby-2" {
		t.Errorf("lobby domains %v, file %q", lobby.Domains, lobby.File)
	}

	sv := got["docker@survival"]
	if sv == nil || sv.Addresses[0].Address != "10.5.0.7:25566" || sv.Addresses[0].Priority != 2 || sv.ProxyMode != "server_only" ||
		!sv.SendProxyProtocol || sv.Name != "Survival" || sv.MOTD.Online == nil || sv.MOTD.Online.Text != "§aSurvival" {
		t.Errorf("survival (preferred network, port, mode, PROXY, name, MOTD): %+v", sv)
	}
	if c := got["docker@creative"]; c == nil || c.Domains[0] != "creative.docker.local" || c.ProxyMode != "passthrough" {
		t.Errorf("creative: %+v", c)
	}
	if p := got["docker@published"]; p == nil || p.Addresses[0].Address != "127.0.0.1:30001" {
		t.Errorf("published: %+v", p)
	}
	if n := got["docker@named"]; n == nil || n.Addresses[0].Address != "named:25565" {
		t.Errorf("named: %+v", n)
	}
}

func TestLabelProblems(t *testing.T) {
	on := func(extra map[string]string) map[string]string {
		l := map[string]string{LabelEnable: "true", LabelName: "x", LabelDomains: "x.example.com"}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	net := map[string]string{"n": "10.0.0.2"}
	cases := []struct {
		name      string
		cs        []Container
		servers   int
		addresses int
		want      string
	}{
		{"bad port", []Container{ctr("a", on(map[string]string{LabelPort: "99999"}), net)}, 0, 0, "infrarust.port \"99999\" is not a port"},
		{"bad weight", []Container{ctr("a", on(map[string]string{LabelWeight: "heavy"}), net)}, 0, 0, "infrarust.weight \"heavy\""},
		{"bad priority", []Container{ctr("a", on(map[string]string{LabelPriority: "-1"}), net)}, 0, 0, "infrarust.priority \"-1\""},
		{"bad mode", []Container{ctr("a", on(map[string]string{LabelProxyMode: "fast"}), net)}, 0, 0, "infrarust.proxy_mode: \"fast\" is not one of"},
		{"bad domain", []Container{ctr("a", on(map[string]string{LabelDomains: "bad domain!"}), net)}, 0, 0, "infrarust.domains: \"bad domain!\" is not a hostname"},
		{"bad bool", []Container{ctr("a", on(map[string]string{LabelSendProxyProtocol: "maybe"}), net)}, 0, 0, "infrarust.send_proxy_protocol: \"maybe\" is not true or false"},
		{"typo", []Container{ctr("a", on(map[string]string{"infrarust.domain": "y.example.com"}), net)}, 1, 1, "unknown label infrarust.domain"},
		{"replica that disagrees", []Container{
			ctr("a", on(nil), net),
			ctr("b", on(map[string]string{LabelDomains: "other.example.com"}), map[string]string{"n": "10.0.0.3"}),
		}, 1, 1, "label infrarust.domains differs from a's"},
		{"one bad replica of two", []Container{
			ctr("a", on(nil), net),
			ctr("b", on(map[string]string{LabelPort: "0"}), map[string]string{"n": "10.0.0.3"}),
		}, 1, 1, "infrarust.port \"0\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			servers, problems := Servers(c.cs, "", nil)
			if len(servers) != c.servers {
				t.Fatalf("%d servers, want %d", len(servers), c.servers)
			}
			if c.servers > 0 && len(servers[0].Addresses) != c.addresses {
				t.Fatalf("%d addresses, want %d", len(servers[0].Addresses), c.addresses)
			}
			var msgs []string
			for _, p := range problems {
				msgs = append(msgs, p.Container+": "+p.Msg)
			}
			if !strings.Contains(strings.Join(msgs, "\n"), c.want) {
				t.Fatalf("problems %q, want one containing %q", msgs, c.want)
			}
		})
	}
}

func FuzzLabels(f *testing.F) {
	f.Add("a.example.com,b", "25565", "2", "0", "passthrough", "true", "least_conn", "§aHi")
	f.Add("", "x", "0", "-5", "nope", "1", "", "")
	f.Add(",,", "65536", "1000001", "1001", "offline", "yes", "random", "\"quoted\"\n[table]")
	f.Fuzz(func(t *testing.T, domains, port, weight, prio, mode, pp, bal, motd string) {
		c := ctr("fz", map[string]string{LabelEnable: "true", LabelDomains: domains, LabelPort: port, LabelWeight: weight,
			LabelPriority: prio, LabelProxyMode: mode, LabelSendProxyProtocol: pp, LabelBalance: bal, LabelMOTD: motd}, map[string]string{"n": "10.0.0.1"})
		servers, problems := Servers([]Container{c}, "", nil)
		if len(servers)+len(problems) == 0 {
			t.Fatal("a container was neither used nor reported")
		}
		for _, s := range servers {
			if len(s.Domains) == 0 || len(s.Addresses) != 1 {
				t.Fatalf("a built server must be usable: %+v", s)
			}
		}
	})
}

// A Compose file written for mc-router is discovered as it is: mc-router.host
// (merged with infrarust.domains), .port, .network and .default, with no
// infrarust.enable needed.
func TestMCRouterLabels(t *testing.T) {
	containers := []Container{
		ctr("mcfoo", map[string]string{MCRouterHost: "foo.example.com, Bar.example.com", MCRouterPort: "25570", MCRouterNetwork: "minecraft"},
			map[string]string{"bridge": "172.17.0.5", "minecraft": "10.5.0.7"}),
		ctr("mcdefault", map[string]string{MCRouterDefault: "true"}, map[string]string{"minecraft": "10.5.0.8"}),
		ctr("both", map[string]string{LabelEnable: "true", LabelDomains: "both.example.com", MCRouterHost: "alias.example.com"}, map[string]string{"minecraft": "10.5.0.9"}),
		ctr("plain", map[string]string{"com.example.other": "x"}, map[string]string{"minecraft": "10.5.0.10"}),
		ctr("badport", map[string]string{MCRouterHost: "bad.example.com", MCRouterPort: "http"}, map[string]string{"minecraft": "10.5.0.11"}),
	}
	servers, problems := Servers(containers, "", nil)
	got := byID(servers)
	foo := got[IDPrefix+"mcfoo"]
	if foo == nil || strings.Join(foo.Domains, ",") != "foo.example.com,bar.example.com" || foo.Addresses[0].Address != "10.5.0.7:25570" {
		t.Fatalf("mc-router.host/port/network: %+v", foo)
	}
	if d := got[IDPrefix+"mcdefault"]; d == nil || !slices.Contains(d.Domains, "*") {
		t.Fatalf("mc-router.default: %+v", d)
	}
	if b := got[IDPrefix+"both"]; b == nil || strings.Join(b.Domains, ",") != "both.example.com,alias.example.com" {
		t.Fatalf("both label sets: %+v", b)
	}
	if got[IDPrefix+"plain"] != nil {
		t.Fatal("a container without our labels or mc-router's was discovered")
	}
	if got[IDPrefix+"badport"] != nil || len(problems) != 1 || !strings.Contains(problems[0].Msg, `mc-router.port "http" is not a port`) {
		t.Fatalf("bad mc-router.port: problems %+v", problems)
	}
}

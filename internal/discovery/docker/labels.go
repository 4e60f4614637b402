package docker

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery"
)

// The labels a container carries to be discovered: the Rust Infrarust's, so its
// compose files work unchanged, plus the balancing ones.
const (
	LabelEnable            = "infrarust.enable"
	LabelDomains           = "infrarust.domains"
	LabelPort              = "infrarust.port"
	LabelProxyMode         = "infrarust.proxy_mode"
	LabelSendProxyProtocol = "infrarust.send_proxy_protocol"
	LabelName              = "infrarust.name"
	LabelNetwork           = "infrarust.network"
	LabelMOTD              = "infrarust.motd.text"
	LabelWeight            = "infrarust.weight"
	LabelPriority          = "infrarust.priority"
	LabelBalance           = "infrarust.balance"
)

// mc-router's labels, read as aliases so a Compose file written for mc-router
// is discovered as it is: a container with mc-router.host (or
// mc-router.default=true) needs no infrarust.enable.
const (
	MCRouterHost    = "mc-router.host"    // hostnames, comma-separated: infrarust.domains
	MCRouterPort    = "mc-router.port"    // infrarust.port
	MCRouterNetwork = "mc-router.network" // infrarust.network
	MCRouterDefault = "mc-router.default" // true: every hostname no other server claims
)

// knownLabels lists every infrarust.* label, to point out typos.
var knownLabels = []string{LabelEnable, LabelDomains, LabelPort, LabelProxyMode, LabelSendProxyProtocol,
	LabelName, LabelNetwork, LabelMOTD, LabelWeight, LabelPriority, LabelBalance}

// serverLabels must agree between the replicas of one server.
var serverLabels = []string{LabelDomains, MCRouterHost, MCRouterDefault, LabelProxyMode, LabelSendProxyProtocol, LabelMOTD, LabelBalance}

// wanted says whether a container is to be discovered: infrarust.enable=true,
// or mc-router's labels.
func wanted(c Container) bool {
	return isTrue(c.Labels[LabelEnable]) || strings.TrimSpace(c.Labels[MCRouterHost]) != "" || isTrue(c.Labels[MCRouterDefault])
}

// label is the value of ours, else of mc-router's alias.
func label(c Container, ours, alias string) (string, string) {
	if v := strings.TrimSpace(c.Labels[ours]); v != "" {
		return v, ours
	}
	return strings.TrimSpace(c.Labels[alias]), alias
}

// Compose's labels, which group `docker compose up --scale` replicas.
const (
	composeProject = "com.docker.compose.project"
	composeService = "com.docker.compose.service"
)

// IDPrefix starts the id of every server found from Docker labels, as the Rust
// Infrarust's provider ids do (docker@<name>).
const IDPrefix = "docker@"

// defaultBalance spreads players over replicas; a file's default (first_available)
// would send everyone to the first container of a scaled service.
const defaultBalance = "least_conn"

// Problem is why a container is not (fully) used, for the operator's log.
type Problem struct {
	Container string
	Msg       string
}

// Servers turns the running containers with infrarust.enable=true into servers.
// Containers that share a name (infrarust.name, else their compose project and
// service, else the container name) are replicas of one server, balanced by the
// proxy. network is [docker] network; global supplies what a server inherits.
func Servers(containers []Container, network string, global *config.Config) ([]*config.Server, []Problem) {
	var problems []Problem
	groups := map[string][]Container{}
	for _, c := range containers {
		if !wanted(c) {
			continue
		}
		for k := range c.Labels {
			if strings.HasPrefix(k, "infrarust.") && !known(k) {
				problems = append(problems, Problem{c.Name(), fmt.Sprintf("unknown label %s (ignored); the labels are %s", k, strings.Join(knownLabels, ", "))})
			}
		}
		g := groupName(c)
		groups[g] = append(groups[g], c)
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	var out []*config.Server
	for _, g := range names {
		s, ps := buildGroup(g, groups[g], network, global)
		problems = append(problems, ps...)
		if s != nil {
			out = append(out, s)
		}
	}
	return out, problems
}

func known(label string) bool {
	for _, k := range knownLabels {
		if k == label {
			return true
		}
	}
	return false
}

// groupName is what makes containers replicas of one server.
func groupName(c Container) string {
	if n := strings.TrimSpace(c.Labels[LabelName]); n != "" {
		return n
	}
	if p, s := c.Labels[composeProject], c.Labels[composeService]; p != "" && s != "" {
		return p + "-" + s
	}
	return c.Name()
}

// serverID makes a group name safe as a server id (used in admin API paths and the
// drain store).
func serverID(group string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(group) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return IDPrefix + b.String()
}

// buildGroup builds one server from its replicas. The server-level labels come from
// the first container by name; a replica that disagrees is left out, since it
// probably belongs to another server.
func buildGroup(group string, cs []Container, network string, global *config.Config) (*config.Server, []Problem) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].Name() < cs[j].Name() })
	var problems []Problem
	first := cs[0]
	var addrs []any
	var used []string
	for _, c := range cs {
		if c.Name() != first.Name() {
			if l := disagreement(first, c); l != "" {
				problems = append(problems, Problem{c.Name(), fmt.Sprintf("label %s differs from %s's, a replica of the same server %q; this container is left out (give it another %s to make it its own server)", l, first.Name(), group, LabelName)})
				continue
			}
		}
		a, err := address(c, network)
		if err != nil {
			problems = append(problems, Problem{c.Name(), err.Error() + "; this container is left out"})
			continue
		}
		addrs = append(addrs, a)
		used = append(used, c.Name())
	}
	if len(addrs) == 0 {
		return nil, problems
	}
	l := first.Labels
	domains := splitList(l[LabelDomains])
	for _, d := range splitList(l[MCRouterHost]) {
		if !slices.Contains(domains, d) {
			domains = append(domains, d)
		}
	}
	if isTrue(l[MCRouterDefault]) {
		domains = append(domains, "*") // every hostname no other server claims
	}
	if len(domains) == 0 {
		domains = []string{group + ".docker.local"} // the Rust Infrarust's default
	}
	table := map[string]any{"domains": domains, "addresses": addrs, "balance": defaultBalance}
	if v := strings.TrimSpace(l[LabelBalance]); v != "" {
		table["balance"] = v
	}
	if v := strings.TrimSpace(l[LabelProxyMode]); v != "" {
		table["proxy_mode"] = v
	}
	if v, ok := l[LabelSendProxyProtocol]; ok {
		b, err := parseBool(v)
		if err != nil {
			return nil, append(problems, Problem{first.Name(), LabelSendProxyProtocol + ": " + err.Error()})
		}
		table["send_proxy_protocol"] = b
	}
	if v := strings.TrimSpace(l[LabelName]); v != "" {
		table["name"] = v
	}
	if v := l[LabelMOTD]; v != "" {
		table["motd"] = map[string]any{"online": map[string]any{"text": v}}
	}
	describe := "docker container " + strings.Join(used, ", ")
	s, err := discovery.Build("docker", serverID(group), describe, table, global, labelOf)
	if err != nil {
		return nil, append(problems, Problem{first.Name(), err.Error()})
	}
	return s, problems
}

// labelOf names the label a key of the built table came from.
func labelOf(key string) string {
	switch {
	case strings.HasPrefix(key, "domains"):
		return LabelDomains
	case strings.HasPrefix(key, "addresses"):
		return LabelPort + "/" + LabelWeight + "/" + LabelPriority
	case key == "balance":
		return LabelBalance
	case key == "proxy_mode":
		return LabelProxyMode
	case key == "send_proxy_protocol":
		return LabelSendProxyProtocol
	case key == "name":
		return LabelName
	case strings.HasPrefix(key, "motd"):
		return LabelMOTD
	}
	return ""
}

// disagreement names the first server-level label that differs between a and b.
func disagreement(a, b Container) string {
	for _, l := range serverLabels {
		if strings.TrimSpace(a.Labels[l]) != strings.TrimSpace(b.Labels[l]) {
			return l
		}
	}
	return ""
}

// address is one replica's entry: where the proxy reaches the container, with its
// weight and priority.
func address(c Container, network string) (map[string]any, error) {
	port := config.DefaultPort
	if v, from := label(c, LabelPort, MCRouterPort); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 1 || p > 65535 {
			return nil, fmt.Errorf("%s %q is not a port (1-65535)", from, v)
		}
		port = p
	}
	entry := map[string]any{"address": resolve(c, network, port)}
	if v := strings.TrimSpace(c.Labels[LabelWeight]); v != "" {
		w, err := strconv.Atoi(v)
		if err != nil || w < 1 || w > 1000000 {
			return nil, fmt.Errorf("%s %q is not a whole number from 1 to 1000000", LabelWeight, v)
		}
		entry["weight"] = w
	}
	if v := strings.TrimSpace(c.Labels[LabelPriority]); v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > 1000 {
			return nil, fmt.Errorf("%s %q is not a whole number from 0 to 1000", LabelPriority, v)
		}
		entry["priority"] = p
	}
	return entry, nil
}

// resolve finds where the proxy reaches a container, in the Rust Infrarust's
// order: its IP on the preferred network (the container's infrarust.network label,
// else [docker] network), else on its first network by name, else a port published
// on the host (0.0.0.0 meaning this host), else its name, which Docker's DNS
// resolves for a proxy on the same user-defined network.
func resolve(c Container, network string, port int) string {
	nets := c.NetworkSettings.Networks
	ip := func(n Network) string {
		if n.IPAddress != "" {
			return n.IPAddress
		}
		return n.GlobalIPv6Address
	}
	preferred, _ := label(c, LabelNetwork, MCRouterNetwork)
	for _, want := range []string{preferred, network} {
		if n, ok := nets[want]; ok && want != "" && ip(n) != "" {
			return net.JoinHostPort(ip(n), strconv.Itoa(port))
		}
	}
	names := make([]string, 0, len(nets))
	for n := range nets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if a := ip(nets[n]); a != "" {
			return net.JoinHostPort(a, strconv.Itoa(port))
		}
	}
	for _, p := range c.Ports {
		if p.PrivatePort == port && p.PublicPort != 0 && (p.Type == "" || p.Type == "tcp") {
			host := p.IP
			if host == "" || host == "0.0.0.0" || host == "::" {
				host = "127.0.0.1"
			}
			return net.JoinHostPort(host, strconv.Itoa(p.PublicPort))
		}
	}
	return net.JoinHostPort(c.Name(), strconv.Itoa(port))
}

func splitList(v string) []string {
	var out []string
	for _, d := range strings.Split(v, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// isTrue is how the Rust Infrarust reads infrarust.enable.
func isTrue(v string) bool {
	b, err := parseBool(v)
	return err == nil && b
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("%q is not true or false", v)
}

package kubernetes

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/infrarust-go/infrarust/internal/config"
	"github.com/infrarust-go/infrarust/internal/discovery"
)

// The annotations a Service carries to be discovered: ours, and mc-router's two,
// read as aliases so an mc-router setup can switch without editing its Services.
const (
	AnnotationDomains           = "infrarust.io/domains"
	AnnotationPort              = "infrarust.io/port"
	AnnotationProxyMode         = "infrarust.io/proxy-mode"
	AnnotationSendProxyProtocol = "infrarust.io/send-proxy-protocol"
	AnnotationBalance           = "infrarust.io/balance"
	AnnotationName              = "infrarust.io/name"
	AnnotationMOTD              = "infrarust.io/motd"
	// AnnotationWorkload makes the server scale to zero: "statefulset/NAME" or
	// "deployment/NAME" in the Service's namespace, woken by a login.
	AnnotationWorkload      = "infrarust.io/workload"
	AnnotationReplicas      = "infrarust.io/replicas"
	AnnotationShutdownAfter = "infrarust.io/shutdown-after"

	MCRouterExternalServerName = "mc-router.itzg.me/externalServerName"
	MCRouterDefaultServer      = "mc-router.itzg.me/defaultServer"
)

// IDPrefix starts the id of every server found from Services: kubernetes@NAME.NAMESPACE.
const IDPrefix = "kubernetes@"

// serviceNameLabel ties an EndpointSlice to its Service.
const serviceNameLabel = "kubernetes.io/service-name"

// Service is the part of a v1 Service the proxy reads.
type Service struct {
	Metadata ObjectMeta `json:"metadata"`
	Spec     struct {
		Type  string        `json:"type"`
		Ports []ServicePort `json:"ports"`
	} `json:"spec"`
}

// ServicePort is one port of a Service.
type ServicePort struct {
	Name     string `json:"name"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
}

// EndpointSlice is the part of a discovery.k8s.io/v1 EndpointSlice the proxy reads.
type EndpointSlice struct {
	Metadata    ObjectMeta `json:"metadata"`
	AddressType string     `json:"addressType"` // IPv4, IPv6, FQDN
	Endpoints   []Endpoint `json:"endpoints"`
	Ports       []struct {
		Name     *string `json:"name"`
		Port     *int    `json:"port"`
		Protocol string  `json:"protocol"`
	} `json:"ports"`
}

// Endpoint is one backend (usually a pod) of a slice.
type Endpoint struct {
	Addresses  []string `json:"addresses"`
	Conditions struct {
		Ready       *bool `json:"ready"`
		Terminating *bool `json:"terminating"`
	} `json:"conditions"`
	TargetRef *struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
		UID  string `json:"uid"`
	} `json:"targetRef"`
}

// ready follows the API's rule: a nil ready condition means ready; terminating
// endpoints take no new players.
func (e Endpoint) ready() bool {
	if e.Conditions.Terminating != nil && *e.Conditions.Terminating {
		return false
	}
	return e.Conditions.Ready == nil || *e.Conditions.Ready
}

// Problem is why a Service is not (fully) used, for the operator's log.
type Problem struct {
	Service string // namespace/name
	Msg     string
}

// wanted reports whether a Service asks to be discovered.
func wanted(s *Service) bool {
	a := s.Metadata.Annotations
	return strings.TrimSpace(a[AnnotationDomains]) != "" || strings.TrimSpace(a[MCRouterExternalServerName]) != "" ||
		isTrue(a[MCRouterDefaultServer]) || strings.TrimSpace(a[AnnotationWorkload]) != ""
}

// Servers builds one server per annotated Service, each ready endpoint of its
// EndpointSlices an address (the proxy balances across the pods itself, with slow
// start, ejection and drain), or, for a Service that scales to zero
// (infrarust.io/workload), the Service's own DNS name, which answers once a pod is
// ready; the server manager's readiness ping waits for that.
func Servers(services map[string]Service, slices map[string]EndpointSlice, global *config.Config) ([]*config.Server, []Problem) {
	bySvc := map[string][]EndpointSlice{}
	for _, sl := range slices {
		if n := sl.Metadata.Labels[serviceNameLabel]; n != "" {
			k := sl.Metadata.Namespace + "/" + n
			bySvc[k] = append(bySvc[k], sl)
		}
	}
	keys := make([]string, 0, len(services))
	for k := range services {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []*config.Server
	var problems []Problem
	for _, k := range keys {
		svc := services[k]
		if !wanted(&svc) {
			continue
		}
		s, err := build(&svc, bySvc[k], global)
		if err != nil {
			problems = append(problems, Problem{k, err.Error()})
			continue
		}
		out = append(out, s)
	}
	return out, problems
}

func build(svc *Service, slices []EndpointSlice, global *config.Config) (*config.Server, error) {
	a := svc.Metadata.Annotations
	ns, name := svc.Metadata.Namespace, svc.Metadata.Name
	var domains []string
	for _, v := range []string{a[AnnotationDomains], a[MCRouterExternalServerName]} {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" && !contains(domains, strings.ToLower(d)) {
				domains = append(domains, strings.ToLower(d))
			}
		}
	}
	if isTrue(a[MCRouterDefaultServer]) {
		domains = append(domains, "*") // every hostname no other server claims
	}
	if len(domains) == 0 {
		return nil, fmt.Errorf("%s (or %s) names no hostname", AnnotationDomains, MCRouterExternalServerName)
	}
	port, err := servicePort(svc)
	if err != nil {
		return nil, err
	}
	table := map[string]any{"domains": domains, "balance": "least_conn"}
	workload := strings.TrimSpace(a[AnnotationWorkload])
	if workload != "" {
		// One stable address, pingable while the workload scales from zero.
		table["addresses"] = []any{net.JoinHostPort(name+"."+ns+".svc", strconv.Itoa(port.Port))}
		sm := map[string]any{"type": "kubernetes", "namespace": ns, "workload": workload}
		if v := strings.TrimSpace(a[AnnotationReplicas]); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("%s %q is not a whole number", AnnotationReplicas, v)
			}
			sm["replicas"] = n
		}
		if v := strings.TrimSpace(a[AnnotationShutdownAfter]); v != "" {
			sm["shutdown_after"] = v
		}
		table["server_manager"] = sm
	} else {
		table["addresses"] = endpointAddresses(slices, port.Name)
	}
	if v := strings.TrimSpace(a[AnnotationBalance]); v != "" {
		table["balance"] = v
	}
	if v := strings.TrimSpace(a[AnnotationProxyMode]); v != "" {
		table["proxy_mode"] = v
	}
	if v, ok := a[AnnotationSendProxyProtocol]; ok {
		b, err := parseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", AnnotationSendProxyProtocol, err)
		}
		table["send_proxy_protocol"] = b
	}
	if v := strings.TrimSpace(a[AnnotationName]); v != "" {
		table["name"] = v
	}
	if v := a[AnnotationMOTD]; v != "" {
		table["motd"] = map[string]any{"online": map[string]any{"text": v}}
	}
	describe := "kubernetes service " + ns + "/" + name
	s, err := discovery.Build("kubernetes", IDPrefix+name+"."+ns, describe, table, global, annotationOf)
	if err != nil {
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), describe+": "))
	}
	return s, nil
}

// servicePort picks the Minecraft port: infrarust.io/port (a name or a number),
// else the port named "minecraft" (or "mc"), else the only or first TCP port.
func servicePort(svc *Service) (ServicePort, error) {
	ports := svc.Spec.Ports
	if len(ports) == 0 {
		return ServicePort{}, fmt.Errorf("the Service has no ports")
	}
	if want := strings.TrimSpace(svc.Metadata.Annotations[AnnotationPort]); want != "" {
		for _, p := range ports {
			if p.Name == want || strconv.Itoa(p.Port) == want {
				return p, nil
			}
		}
		return ServicePort{}, fmt.Errorf("%s %q is not a port of the Service (its ports: %s)", AnnotationPort, want, portList(ports))
	}
	for _, name := range []string{"minecraft", "mc"} {
		for _, p := range ports {
			if p.Name == name {
				return p, nil
			}
		}
	}
	for _, p := range ports {
		if p.Protocol == "" || p.Protocol == "TCP" {
			return p, nil
		}
	}
	return ServicePort{}, fmt.Errorf("the Service has no TCP port")
}

func portList(ports []ServicePort) string {
	var out []string
	for _, p := range ports {
		if p.Name != "" {
			out = append(out, p.Name+"="+strconv.Itoa(p.Port))
		} else {
			out = append(out, strconv.Itoa(p.Port))
		}
	}
	return strings.Join(out, ", ")
}

// endpointAddresses lists every ready endpoint once (a dual-stack pod is in an
// IPv4 and an IPv6 slice: IPv4 is kept), with the slice's port of that name.
func endpointAddresses(slices []EndpointSlice, portName string) []any {
	sort.Slice(slices, func(i, j int) bool {
		if slices[i].AddressType != slices[j].AddressType {
			return slices[i].AddressType == "IPv4" // IPv4 first, then IPv6, then FQDN
		}
		return slices[i].Metadata.Name < slices[j].Metadata.Name
	})
	seen := map[string]bool{}
	var addrs []string
	for _, sl := range slices {
		port := 0
		for _, p := range sl.Ports {
			n := ""
			if p.Name != nil {
				n = *p.Name
			}
			if n == portName && p.Port != nil {
				port = *p.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, e := range sl.Endpoints {
			if !e.ready() || len(e.Addresses) == 0 {
				continue
			}
			id := e.Addresses[0]
			if e.TargetRef != nil && e.TargetRef.UID != "" {
				id = e.TargetRef.UID
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			addrs = append(addrs, net.JoinHostPort(e.Addresses[0], strconv.Itoa(port)))
		}
	}
	sort.Strings(addrs)
	out := make([]any, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a)
	}
	return out
}

// annotationOf names the annotation a key of the built table came from.
func annotationOf(key string) string {
	switch {
	case strings.HasPrefix(key, "domains"):
		return AnnotationDomains
	case key == "balance":
		return AnnotationBalance
	case key == "proxy_mode":
		return AnnotationProxyMode
	case key == "name":
		return AnnotationName
	case strings.HasPrefix(key, "motd"):
		return AnnotationMOTD
	case key == "server_manager.workload":
		return AnnotationWorkload
	case key == "server_manager.replicas":
		return AnnotationReplicas
	case key == "server_manager.shutdown_after":
		return AnnotationShutdownAfter
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

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

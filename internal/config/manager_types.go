package config

import (
	"net/url"
	"regexp"
	"strings"
)

// ManagerTypes are the [server_manager] types, for messages and docs.
var ManagerTypes = []string{"local", "pterodactyl", "crafty", "docker", "kubernetes"}

// ManagerOutputs are the values of a local server's output; WithDefaults makes
// "" the first.
var ManagerOutputs = []string{"file", "log", "off"}

// dnsLabel is a Kubernetes object name (RFC 1123 subdomain, as Deployments and
// StatefulSets use) or a Docker container name/ID.
var (
	k8sName       = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)
	containerName = regexp.MustCompile(`^/?[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
)

// ParseWorkload splits a kubernetes manager's workload ("statefulset/survival") into
// the API resource and the name; ok is false when it is not one of those forms.
func ParseWorkload(w string) (resource, name string, ok bool) {
	kind, name, found := strings.Cut(strings.TrimSpace(w), "/")
	if !found || !k8sName.MatchString(name) || len(name) > 253 {
		return "", "", false
	}
	switch strings.ToLower(kind) {
	case "statefulset", "statefulsets", "sts":
		return "statefulsets", name, true
	case "deployment", "deployments", "deploy":
		return "deployments", name, true
	}
	return "", "", false
}

// validateManagerType checks the keys of the types added beside local and
// pterodactyl; known is false for a type no provider exists for.
func validateManagerType(r *report, sm *ServerManager) (known bool) {
	switch sm.Type {
	case "crafty":
		if sm.URL == "" {
			r.check("server_manager", "type \"crafty\" needs url (the Crafty Controller's address, e.g. https://crafty.example.com:8443)")
		} else if u, err := url.Parse(sm.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			r.check("server_manager.url", "%q is not an http(s) address like https://crafty.example.com:8443", sm.URL)
		}
		if sm.ServerID == "" {
			r.check("server_manager", "type \"crafty\" needs server_id (the server's id in Crafty: Servers → the server → its URL's id=...)")
		}
		if name, ok := strings.CutPrefix(sm.APIKey, "env:"); sm.APIKey == "" || ok && name == "" {
			r.check("server_manager", "type \"crafty\" needs api_key: an API token of a Crafty user allowed to start and stop the server, or \"env:VAR\"")
		}
	case "docker":
		if sm.Container == "" {
			r.check("server_manager", "type \"docker\" needs container (the container's name or ID, as `docker ps` shows it)")
		} else if !containerName.MatchString(sm.Container) {
			r.check("server_manager.container", "%q is not a container name or ID", sm.Container)
		}
		if sm.Endpoint != "" {
			if err := CheckDockerEndpoint(sm.Endpoint); err != nil {
				r.check("server_manager.endpoint", "%v", err)
			}
		}
	case "kubernetes":
		if sm.Workload == "" {
			r.check("server_manager", "type \"kubernetes\" needs workload: \"statefulset/NAME\" or \"deployment/NAME\"")
		} else if _, _, ok := ParseWorkload(sm.Workload); !ok {
			r.check("server_manager.workload", "%q is not \"statefulset/NAME\" or \"deployment/NAME\"", sm.Workload)
		}
		if sm.Namespace != "" && !k8sName.MatchString(sm.Namespace) {
			r.check("server_manager.namespace", "%q is not a namespace name", sm.Namespace)
		}
		if sm.Replicas < 1 || sm.Replicas > 1000 {
			r.check("server_manager.replicas", "must be from 1 to 1000 (how many replicas a wake scales to)")
		}
	default:
		return false
	}
	return true
}

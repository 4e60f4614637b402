// Package kubetest is a fake Kubernetes API server for the tests of Service
// discovery and the kubernetes server manager: Services and EndpointSlices with
// list and watch (resourceVersions, bookmarks, 410 Gone after a compaction, watches
// the server closes), StatefulSets and Deployments with their scale subresource,
// and bearer-token checks. It serves over httptest, so [kubernetes] api_server
// points at it.
package kubetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Token is the bearer token the fake accepts.
const Token = "kubetest-token"

type object = map[string]any

type event struct {
	rv   int
	typ  string // ADDED, MODIFIED, DELETED
	kind string // services, endpointslices
	obj  object
}

// Server is the fake API server.
type Server struct {
	HTTP *httptest.Server

	mu        sync.Mutex
	rv        int
	objects   map[string]map[string]object // kind -> ns/name -> object
	log       []event                      // watch history
	compacted int                          // watches from an rv below this get 410
	watches   map[chan struct{}]bool       // open watches; closed to end them
	wake      chan struct{}                // closed and replaced on every change
	calls     []string
	// AutoReady makes a scaled workload report readyReplicas = replicas at once.
	AutoReady bool
	forbidden map[string]bool // "verb path-prefix" answered 403
}

// Start serves a fake API server; Close it when done.
func Start() *Server {
	s := &Server{objects: map[string]map[string]object{}, watches: map[chan struct{}]bool{}, wake: make(chan struct{}), AutoReady: true, forbidden: map[string]bool{}}
	s.HTTP = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.CloseWatches()
	s.HTTP.Close()
}

// URL is the api_server to configure.
func (s *Server) URL() string { return s.HTTP.URL }

// Calls are the "METHOD path?query" requests served so far.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Forbid answers 403 to method on paths starting with prefix (RBAC missing).
func (s *Server) Forbid(method, prefix string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forbidden[method+" "+prefix] = on
}

// Apply creates or replaces an object of kind ("services", "endpointslices",
// "statefulsets", "deployments") and records the watch event.
func (s *Server) Apply(kind string, obj object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(kind, obj)
}

func (s *Server) put(kind string, obj object) {
	meta := obj["metadata"].(object)
	k := meta["namespace"].(string) + "/" + meta["name"].(string)
	if s.objects[kind] == nil {
		s.objects[kind] = map[string]object{}
	}
	typ := "ADDED"
	if _, ok := s.objects[kind][k]; ok {
		typ = "MODIFIED"
	}
	s.rv++
	meta["resourceVersion"] = strconv.Itoa(s.rv)
	s.objects[kind][k] = obj
	s.log = append(s.log, event{s.rv, typ, kind, clone(obj)})
	s.notify()
}

// Delete removes an object.
func (s *Server) Delete(kind, namespace, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := namespace + "/" + name
	obj, ok := s.objects[kind][k]
	if !ok {
		return
	}
	delete(s.objects[kind], k)
	s.rv++
	obj = clone(obj)
	obj["metadata"].(object)["resourceVersion"] = strconv.Itoa(s.rv)
	s.log = append(s.log, event{s.rv, "DELETED", kind, obj})
	s.notify()
}

// Compact forgets the watch history and ends the open watches: a watch resuming
// from a version before now gets 410 Gone; a fresh list gives a usable version.
func (s *Server) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	s.compacted = s.rv
	s.log = nil
	for ch := range s.watches {
		close(ch)
		delete(s.watches, ch)
	}
}

// WaitWatches waits until n watches are open (so CloseWatches reaches them).
func (s *Server) WaitWatches(n int) error {
	deadline := time.Now().Add(10 * time.Second)
	for s.Watches() < n {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d watches open, want %d", s.Watches(), n)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// CloseWatches ends every open watch, as the API server does at timeoutSeconds.
func (s *Server) CloseWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.watches {
		close(ch)
		delete(s.watches, ch)
	}
}

// Watches is how many watches are open.
func (s *Server) Watches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watches)
}

// Object returns a copy of an object (nil when absent).
func (s *Server) Object(kind, namespace, name string) object {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.objects[kind][namespace+"/"+name]; ok {
		return clone(o)
	}
	return nil
}

func (s *Server) notify() {
	close(s.wake)
	s.wake = make(chan struct{})
}

func clone(o object) object {
	b, _ := json.Marshal(o)
	var out object
	_ = json.Unmarshal(b, &out)
	return out
}

// Service builds a Service object with annotations and one port per "name=port".
func Service(namespace, name string, annotations map[string]string, ports ...string) object {
	var ps []any
	for _, p := range ports {
		n, num, _ := strings.Cut(p, "=")
		port, _ := strconv.Atoi(num)
		ps = append(ps, object{"name": n, "port": port, "protocol": "TCP"})
	}
	ann := object{}
	for k, v := range annotations {
		ann[k] = v
	}
	return object{"apiVersion": "v1", "kind": "Service",
		"metadata": object{"name": name, "namespace": namespace, "annotations": ann, "labels": object{}},
		"spec":     object{"type": "ClusterIP", "ports": ps}}
}

// Endpoint is one endpoint of a slice.
type Endpoint struct {
	IP    string
	Ready bool
	Pod   string
}

// Slice builds an EndpointSlice of service with one port.
func Slice(namespace, name, service, portName string, port int, eps ...Endpoint) object {
	var list []any
	for _, e := range eps {
		list = append(list, object{"addresses": []any{e.IP}, "conditions": object{"ready": e.Ready},
			"targetRef": object{"kind": "Pod", "name": e.Pod, "uid": "uid-" + e.Pod}})
	}
	return object{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
		"metadata":  object{"name": name, "namespace": namespace, "labels": object{"kubernetes.io/service-name": service}},
		"endpoints": list,
		"ports":     []any{object{"name": portName, "port": port, "protocol": "TCP"}}}
}

// Workload builds a StatefulSet or Deployment (kind "statefulsets"/"deployments")
// with spec.replicas.
func Workload(namespace, name string, replicas int) object {
	return object{"metadata": object{"name": name, "namespace": namespace},
		"spec": object{"replicas": replicas}, "status": object{"replicas": replicas, "readyReplicas": replicas}}
}

// SetStatus sets a workload's status.replicas and readyReplicas.
func (s *Server) SetStatus(kind, namespace, name string, replicas, ready int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects[kind][namespace+"/"+name]
	if o == nil {
		return
	}
	o["status"] = object{"replicas": replicas, "readyReplicas": ready}
	s.rv++
	o["metadata"].(object)["resourceVersion"] = strconv.Itoa(s.rv)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls = append(s.calls, r.Method+" "+r.URL.RequestURI())
	forbidden := false
	for k, on := range s.forbidden {
		m, prefix, _ := strings.Cut(k, " ")
		if on && m == r.Method && strings.HasPrefix(r.URL.Path, prefix) {
			forbidden = true
		}
	}
	s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+Token {
		status(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized")
		return
	}
	if forbidden {
		status(w, http.StatusForbidden, "Forbidden", "forbidden by the test")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	// /api/v1/services, /api/v1/namespaces/{ns}/services
	case len(parts) == 3 && parts[0] == "api" && parts[2] == "services":
		s.collection(w, r, "services", "")
	case len(parts) == 5 && parts[0] == "api" && parts[2] == "namespaces" && parts[4] == "services":
		s.collection(w, r, "services", parts[3])
	case len(parts) == 4 && parts[0] == "apis" && parts[1] == "discovery.k8s.io" && parts[3] == "endpointslices":
		s.collection(w, r, "endpointslices", "")
	case len(parts) == 6 && parts[0] == "apis" && parts[1] == "discovery.k8s.io" && parts[5] == "endpointslices":
		s.collection(w, r, "endpointslices", parts[4])
	// /apis/apps/v1/namespaces/{ns}/{kind}/{name}[/scale]
	case len(parts) >= 7 && parts[0] == "apis" && parts[1] == "apps" && parts[3] == "namespaces":
		s.workload(w, r, parts[5], parts[4], parts[6], len(parts) == 8 && parts[7] == "scale")
	default:
		status(w, http.StatusNotFound, "NotFound", "the fake has no "+r.URL.Path)
	}
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(object{"kind": "Status", "status": "Failure", "message": msg, "reason": reason, "code": code})
}

// selects reports whether obj's labels match a selector of "k", "k=v" terms.
func selects(obj object, selector string) bool {
	labels, _ := obj["metadata"].(object)["labels"].(object)
	for _, term := range strings.Split(selector, ",") {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		k, v, hasV := strings.Cut(term, "=")
		got, ok := labels[k]
		if !ok || hasV && got != v {
			return false
		}
	}
	return true
}

func inNamespace(obj object, ns string) bool {
	return ns == "" || obj["metadata"].(object)["namespace"] == ns
}

func (s *Server) collection(w http.ResponseWriter, r *http.Request, kind, ns string) {
	q := r.URL.Query()
	sel := q.Get("labelSelector")
	if q.Get("watch") == "1" || q.Get("watch") == "true" {
		s.watch(w, r, kind, ns, sel)
		return
	}
	s.mu.Lock()
	var items []object
	for _, o := range s.objects[kind] {
		if inNamespace(o, ns) && selects(o, sel) {
			items = append(items, clone(o))
		}
	}
	rv := s.rv
	s.mu.Unlock()
	sort.Slice(items, func(i, j int) bool {
		return fmt.Sprint(items[i]["metadata"].(object)["name"]) < fmt.Sprint(items[j]["metadata"].(object)["name"])
	})
	if items == nil {
		items = []object{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(object{"kind": "List", "metadata": object{"resourceVersion": strconv.Itoa(rv)}, "items": items})
}

func (s *Server) watch(w http.ResponseWriter, r *http.Request, kind, ns, sel string) {
	from, _ := strconv.Atoi(r.URL.Query().Get("resourceVersion"))
	done := make(chan struct{})
	s.mu.Lock()
	if from < s.compacted {
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_ = json.NewEncoder(w).Encode(object{"type": "ERROR", "object": object{"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version: " + strconv.Itoa(from)}})
		return
	}
	s.watches[done] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.watches[done] {
			delete(s.watches, done)
			close(done)
		}
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	enc := json.NewEncoder(w)
	sent := from
	for {
		s.mu.Lock()
		var batch []event
		for _, e := range s.log {
			if e.rv > sent && e.kind == kind && inNamespace(e.obj, ns) && selects(e.obj, sel) {
				batch = append(batch, e)
			}
		}
		if s.rv > sent {
			sent = s.rv
		}
		wake := s.wake
		s.mu.Unlock()
		for _, e := range batch {
			_ = enc.Encode(object{"type": e.typ, "object": e.obj})
		}
		// A bookmark carries the newest version even when nothing matched.
		_ = enc.Encode(object{"type": "BOOKMARK", "object": object{"metadata": object{"resourceVersion": strconv.Itoa(sent)}}})
		fl.Flush()
		select {
		case <-wake:
		case <-done:
			return
		case <-r.Context().Done():
			return
		case <-time.After(time.Minute):
		}
	}
}

func (s *Server) workload(w http.ResponseWriter, r *http.Request, kind, ns, name string, scale bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects[kind][ns+"/"+name]
	if o == nil {
		status(w, http.StatusNotFound, "NotFound", kind+".apps \""+name+"\" not found")
		return
	}
	spec := o["spec"].(object)
	if r.Method == http.MethodPatch && scale {
		if ct := r.Header.Get("Content-Type"); ct != "application/merge-patch+json" {
			status(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", "content type "+ct)
			return
		}
		var patch struct {
			Spec struct {
				Replicas *int `json:"replicas"`
			} `json:"spec"`
		}
		if err := json.NewDecoder(r.Body).Decode(&patch); err != nil || patch.Spec.Replicas == nil {
			status(w, http.StatusBadRequest, "BadRequest", "bad scale patch")
			return
		}
		spec["replicas"] = *patch.Spec.Replicas
		if s.AutoReady {
			o["status"] = object{"replicas": *patch.Spec.Replicas, "readyReplicas": *patch.Spec.Replicas}
		}
		s.rv++
		o["metadata"].(object)["resourceVersion"] = strconv.Itoa(s.rv)
	} else if r.Method != http.MethodGet {
		status(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if scale {
		_ = json.NewEncoder(w).Encode(object{"kind": "Scale", "metadata": o["metadata"], "spec": object{"replicas": spec["replicas"]},
			"status": object{"replicas": o["status"].(object)["replicas"]}})
		return
	}
	_ = json.NewEncoder(w).Encode(o)
}

package kubernetes

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// FuzzWatchEvents feeds arbitrary bytes to the watch reader: errors, never a panic
// or a hang.
func FuzzWatchEvents(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"b","resourceVersion":"5"}}}` + "\n"))
	f.Add([]byte(`{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}` + "\n\n"))
	f.Add([]byte("{\"type\":\"BOOKMARK\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(data), 32<<10)
		for i := 0; ; i++ {
			if _, err := readEvent(r); err != nil {
				return
			}
			if i > len(data) {
				t.Fatal("more events than bytes")
			}
		}
	})
}

// FuzzServiceAnnotations builds servers from arbitrary annotations and ports: a
// Service is either a usable server or a reported problem.
func FuzzServiceAnnotations(f *testing.F) {
	f.Add("a.example.com,b", "mc.example.com", "true", "minecraft", "passthrough", "1", "statefulset/x", "10m", "minecraft", 25565)
	f.Add("", "", "false", "99", "weird", "maybe", "pod/x", "forever", "", 0)
	f.Fuzz(func(t *testing.T, domains, mcr, def, port, mode, pp, workload, after, portName string, portNum int) {
		var s Service
		s.Metadata = ObjectMeta{Name: "svc", Namespace: "ns", Annotations: map[string]string{
			AnnotationDomains: domains, MCRouterExternalServerName: mcr, MCRouterDefaultServer: def, AnnotationPort: port,
			AnnotationProxyMode: mode, AnnotationSendProxyProtocol: pp, AnnotationWorkload: workload, AnnotationShutdownAfter: after,
		}}
		s.Spec.Ports = []ServicePort{{Name: portName, Port: portNum, Protocol: "TCP"}}
		servers, problems := Servers(map[string]Service{"ns/svc": s}, nil, nil)
		if !wanted(&s) {
			if len(servers)+len(problems) != 0 {
				t.Fatal("an unannotated Service was used")
			}
			return
		}
		if len(servers)+len(problems) != 1 {
			t.Fatalf("%d servers, %d problems", len(servers), len(problems))
		}
		for _, srv := range servers {
			if len(srv.Domains) == 0 || !strings.HasPrefix(srv.ID, IDPrefix) {
				t.Fatalf("unusable server %+v", srv)
			}
		}
	})
}

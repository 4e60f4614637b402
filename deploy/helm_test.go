package deploy

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/infrarust-go/infrarust/internal/config"
)

// The chart is rendered here the way `helm template` renders it, so many values
// are checked in milliseconds (the goldens keep this renderer honest against
// real helm, and helm_real_test.go runs real helm where it must): Go's text/template with the
// Sprig functions the chart uses (and only those: a template calling another
// fails to parse, which keeps this list honest), missing values as empty, and
// lookup answering nothing, as it does without a cluster. Then every document is
// parsed as YAML and checked for the fields the API server requires, and the
// rendered infrarust.toml and server files go through the real config loader.

const chartDir = "helm/infrarust"

// helmFuncs are the Sprig functions the chart may use.
func helmFuncs(include func(string, any) (string, error)) template.FuncMap {
	indent := func(n int, s string) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	}
	str := func(v any) string {
		if v == nil {
			return ""
		}
		return fmt.Sprint(v)
	}
	empty := func(v any) bool {
		if v == nil {
			return true
		}
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.String, reflect.Map, reflect.Slice:
			return rv.Len() == 0
		case reflect.Bool:
			return !rv.Bool()
		case reflect.Int, reflect.Int64:
			return rv.Int() == 0
		case reflect.Float64:
			return rv.Float() == 0
		}
		return false
	}
	toInt := func(v any) int64 {
		switch n := v.(type) {
		case int:
			return int64(n)
		case int64:
			return n
		case float64:
			return int64(n)
		case string:
			i, _ := strconv.ParseInt(n, 10, 64)
			return i
		}
		return 0
	}
	return template.FuncMap{
		"include": include,
		"toYaml": func(v any) string {
			b, err := yaml.Marshal(v)
			if err != nil {
				return ""
			}
			return strings.TrimSuffix(string(b), "\n")
		},
		"indent":     indent,
		"nindent":    func(n int, s string) string { return "\n" + indent(n, s) },
		"quote":      func(v any) string { return strconv.Quote(str(v)) },
		"default":    func(d, v any) any { return map[bool]any{true: d, false: v}[empty(v)] },
		"printf":     fmt.Sprintf,
		"trunc":      func(n int, s string) string { return s[:min(n, len(s))] },
		"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
		"contains":   func(sub, s string) bool { return strings.Contains(s, sub) },
		"add":        func(a, b any) int64 { return toInt(a) + toInt(b) },
		"sha256sum": func(s string) string {
			h := sha256.Sum256([]byte(s))
			return hex.EncodeToString(h[:])
		},
		"b64enc":       func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"b64dec":       func(s string) string { b, _ := base64.StdEncoding.DecodeString(s); return string(b) },
		"randAlphaNum": func(n int) string { return strings.Repeat("k", n) },
		"lookup":       func(_, _, _, _ string) map[string]any { return map[string]any{} },
		"fail":         func(msg string) (string, error) { return "", errors.New(msg) },
		"regexMatch":   func(re, s string) (bool, error) { return regexp.MatchString(re, s) },
		"toString":     str,
		"int":          toInt,
	}
}

// deepMerge lays over onto base, as `helm --set`/`-f` do.
func deepMerge(base, over map[string]any) map[string]any {
	out := maps.Clone(base)
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = deepMerge(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// renderChart renders every template with values.yaml under overrides and returns
// the documents, keyed "Kind/name".
func renderChart(t *testing.T, overrides map[string]any) map[string]map[string]any {
	t.Helper()
	var chart map[string]any
	readYAML(t, filepath.Join(chartDir, "Chart.yaml"), &chart)
	var values map[string]any
	readYAML(t, filepath.Join(chartDir, "values.yaml"), &values)
	values = deepMerge(values, overrides)
	data := map[string]any{
		"Files":   chartFiles(chartDir),
		"Values":  values,
		"Release": map[string]any{"Name": "mc", "Namespace": "minecraft", "Service": "Helm"},
		"Chart":   map[string]any{"Name": chart["name"], "Version": chart["version"], "AppVersion": chart["appVersion"]},
	}
	root := template.New("chart").Option("missingkey=zero")
	include := func(name string, d any) (string, error) {
		var b bytes.Buffer
		err := root.ExecuteTemplate(&b, name, d)
		return b.String(), err
	}
	root.Funcs(helmFuncs(include))
	files, err := filepath.Glob(filepath.Join(chartDir, "templates", "*"))
	if err != nil || len(files) < 8 {
		t.Fatalf("chart templates: %v %v", files, err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := root.New(filepath.Base(f)).Parse(string(src)); err != nil {
			t.Fatalf("%s does not parse: %v", f, err)
		}
	}
	docs := map[string]map[string]any{}
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasPrefix(name, "_") {
			continue
		}
		var b bytes.Buffer
		if err := root.ExecuteTemplate(&b, name, data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := strings.ReplaceAll(b.String(), "<no value>", "")
		if name == "NOTES.txt" {
			if !strings.Contains(out, "infrarust servers list") {
				t.Errorf("NOTES.txt: %s", out)
			}
			continue
		}
		for i, part := range strings.Split(out, "\n---") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			var doc map[string]any
			if err := yaml.Unmarshal([]byte(part+"\n"), &doc); err != nil { // the newline the separator took
				t.Fatalf("%s document %d is not YAML: %v\n%s", name, i, err, part)
			}
			if doc == nil {
				continue
			}
			docs[requireObject(t, name, doc)] = doc
		}
	}
	return docs
}

func readYAML(t *testing.T, path string, out any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// requireObject checks what the API server requires of every object and returns
// its "Kind/name".
func requireObject(t *testing.T, where string, doc map[string]any) string {
	t.Helper()
	kind, _ := doc["kind"].(string)
	api, _ := doc["apiVersion"].(string)
	meta, _ := doc["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if kind == "" || api == "" || name == "" {
		t.Fatalf("%s: an object without apiVersion, kind or metadata.name: %v", where, doc)
	}
	if len(name) > 63 || strings.ToLower(name) != name {
		t.Errorf("%s: %s name %q is not a DNS label", where, kind, name)
	}
	return kind + "/" + name
}

// get walks a document along keys (map keys, or list indexes as ints).
func get(doc any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := doc.(map[string]any)
			doc = m[k]
		case int:
			l, _ := doc.([]any)
			if k >= len(l) {
				return nil
			}
			doc = l[k]
		}
	}
	return doc
}

// rules flattens RBAC rules into "group resource verb" strings.
func rules(doc map[string]any) []string {
	var out []string
	for _, r := range get(doc, "rules").([]any) {
		for _, g := range get(r, "apiGroups").([]any) {
			for _, res := range get(r, "resources").([]any) {
				for _, v := range get(r, "verbs").([]any) {
					out = append(out, fmt.Sprint(g, " ", res, " ", v))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// wantRules is what the code calls: discovery lists and watches Services and
// EndpointSlices; the kubernetes manager reads workloads and patches their scale.
var wantRules = []string{
	" services get", " services list", " services watch",
	"apps deployments get", "apps deployments/scale patch", "apps statefulsets get", "apps statefulsets/scale patch",
	"discovery.k8s.io endpointslices list", "discovery.k8s.io endpointslices watch",
}

// checkDeployment checks the proxy's pod spec, the same in the chart and the manifests.
func checkDeployment(t *testing.T, d map[string]any) {
	t.Helper()
	spec := get(d, "spec", "template", "spec")
	c := get(spec, "containers", 0)
	if get(spec, "securityContext", "runAsNonRoot") != true || get(spec, "securityContext", "runAsUser") != 65532 {
		t.Errorf("the pod must run as 65532, non-root: %v", get(spec, "securityContext"))
	}
	if get(c, "securityContext", "readOnlyRootFilesystem") != true || get(c, "securityContext", "allowPrivilegeEscalation") != false {
		t.Errorf("container securityContext: %v", get(c, "securityContext"))
	}
	if get(c, "readinessProbe", "httpGet", "path") != "/api/v1/ready" || get(c, "livenessProbe", "httpGet", "path") != "/api/v1/health" ||
		get(c, "readinessProbe", "httpGet", "port") != "admin" {
		t.Errorf("probes: %v / %v", get(c, "readinessProbe"), get(c, "livenessProbe"))
	}
	env := map[string]string{}
	for _, e := range get(c, "env").([]any) {
		env[fmt.Sprint(get(e, "name"))] = fmt.Sprint(get(e, "value"))
	}
	if !strings.HasPrefix(env["INFRARUST_ADMIN_BIND"], "0.0.0.0:") || env["INFRARUST_API_KEY_FILE"] != "/run/secrets/infrarust/api-key" || env["INFRARUST_CONFIG"] != "/etc/infrarust/infrarust.toml" {
		t.Errorf("env: %v", env)
	}
	ports := map[string]bool{}
	for _, p := range get(c, "ports").([]any) {
		ports[fmt.Sprint(get(p, "name"), "=", get(p, "containerPort"))] = true
	}
	if !ports["minecraft=25565"] || !ports["admin=8080"] {
		t.Errorf("ports: %v", ports)
	}
	mounts := map[string]bool{}
	for _, m := range get(c, "volumeMounts").([]any) {
		mounts[fmt.Sprint(get(m, "mountPath"))] = true
	}
	for _, p := range []string{"/etc/infrarust/infrarust.toml", "/etc/infrarust/servers", "/run/secrets/infrarust", "/data"} {
		if !mounts[p] {
			t.Errorf("no volume at %s", p)
		}
	}
	if get(d, "spec", "selector", "matchLabels") == nil {
		t.Error("a Deployment needs spec.selector")
	}
	tg, _ := get(spec, "terminationGracePeriodSeconds").(int)
	if tg < 30 {
		t.Errorf("terminationGracePeriodSeconds %v leaves shutdown no time", tg)
	}
}

// loadRenderedConfig loads a rendered infrarust.toml with the pod's environment.
func loadRenderedConfig(t *testing.T, toml string) *config.Config {
	t.Helper()
	for _, v := range config.EnvOverrides {
		t.Setenv(v.Name, "")
		t.Setenv(v.Name+"_FILE", "")
	}
	t.Setenv("INFRARUST_ADMIN_BIND", "0.0.0.0:8080")
	t.Setenv("INFRARUST_API_KEY", "0123456789abcdef0123456789abcdef")
	cfg, err := config.Parse([]byte(toml), "infrarust.toml")
	if err != nil {
		t.Fatalf("the rendered infrarust.toml does not load:\n%v\n%s", err, toml)
	}
	return cfg
}

func TestHelmChartRenders(t *testing.T) {
	docs := renderChart(t, nil)
	for _, want := range []string{"Deployment/mc-infrarust", "Service/mc-infrarust", "Service/mc-infrarust-admin", "ConfigMap/mc-infrarust",
		"ConfigMap/mc-infrarust-servers", "Secret/mc-infrarust-admin", "ServiceAccount/mc-infrarust", "Role/mc-infrarust",
		"RoleBinding/mc-infrarust", "PodDisruptionBudget/mc-infrarust"} {
		if docs[want] == nil {
			t.Errorf("default values render no %s (have %v)", want, slices.Sorted(maps.Keys(docs)))
		}
	}
	if docs["ServiceMonitor/mc-infrarust"] != nil || docs["ClusterRole/mc-infrarust"] != nil {
		t.Error("ServiceMonitor and ClusterRole are off by default")
	}
	checkDeployment(t, docs["Deployment/mc-infrarust"])
	if got := rules(docs["Role/mc-infrarust"]); !slices.Equal(got, wantRules) {
		t.Errorf("Role rules\n got %q\nwant %q", got, wantRules)
	}
	cfg := loadRenderedConfig(t, get(docs["ConfigMap/mc-infrarust"], "data", "infrarust.toml").(string))
	if !cfg.Kubernetes.Enabled || cfg.Kubernetes.Namespace != "" || cfg.ServersDir != "/etc/infrarust/servers" || cfg.Web.DataDir != "/data" || cfg.ShutdownTimeout.D().Seconds() != 25 {
		t.Errorf("rendered config: %+v %+v", cfg.Kubernetes, cfg.Web)
	}
	if key := get(docs["Secret/mc-infrarust-admin"], "data", "api-key").(string); len(key) < 20 {
		t.Errorf("generated admin key %q", key)
	}
	svc := docs["Service/mc-infrarust"]
	if get(svc, "spec", "type") != "LoadBalancer" || get(svc, "spec", "externalTrafficPolicy") != "Local" || get(svc, "spec", "ports", 0, "port") != 25565 {
		t.Errorf("player Service: %v", get(svc, "spec"))
	}
	if get(docs["PodDisruptionBudget/mc-infrarust"], "spec", "minAvailable") != 1 {
		t.Error("PodDisruptionBudget minAvailable")
	}
}

func TestHelmChartOptions(t *testing.T) {
	docs := renderChart(t, map[string]any{
		"discovery": map[string]any{"namespace": "*"},
		"metrics":   map[string]any{"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}}},
		"admin":     map[string]any{"existingSecret": "my-key"},
		"servers": map[string]any{
			"lobby": "domains = [\"lobby.example.com\"]\naddresses = [\"lobby.minecraft.svc:25565\"]\n",
		},
		"config":                 "[rate_limit]\nenabled = true\n",
		"shutdownTimeoutSeconds": 60,
		"podDisruptionBudget":    map[string]any{"enabled": false},
		"image":                  map[string]any{"tag": "1.2.3"},
	})
	if docs["ClusterRole/mc-infrarust"] == nil || docs["ClusterRoleBinding/mc-infrarust"] == nil || docs["Role/mc-infrarust"] != nil {
		t.Errorf("namespace \"*\" needs a ClusterRole: %v", slices.Sorted(maps.Keys(docs)))
	}
	if docs["Secret/mc-infrarust-admin"] != nil || docs["PodDisruptionBudget/mc-infrarust"] != nil {
		t.Error("an existing secret is used as it is; the PDB can be turned off")
	}
	sm := docs["ServiceMonitor/mc-infrarust"]
	if sm == nil || get(sm, "spec", "endpoints", 0, "authorization", "credentials", "name") != "my-key" || get(sm, "metadata", "labels", "release") != "prom" {
		t.Errorf("ServiceMonitor: %v", sm)
	}
	d := docs["Deployment/mc-infrarust"]
	checkDeployment(t, d)
	if get(d, "spec", "template", "spec", "volumes", 2, "secret", "secretName") != "my-key" ||
		get(d, "spec", "template", "spec", "containers", 0, "image") != "ghcr.io/infrarust-go/infrarust:1.2.3" ||
		get(d, "spec", "template", "spec", "terminationGracePeriodSeconds") != 75 { // 60 + shutdownDelaySeconds 5 + 10
		t.Errorf("deployment spec: %v", get(d, "spec", "template", "spec"))
	}
	cfg := loadRenderedConfig(t, get(docs["ConfigMap/mc-infrarust"], "data", "infrarust.toml").(string))
	if cfg.ShutdownDelay.D() != 5*time.Second || cfg.ShutdownTimeout.D() != 60*time.Second {
		t.Errorf("shutdown_delay %v, shutdown_timeout %v: want the chart's 5s and the value's 60s", cfg.ShutdownDelay.D(), cfg.ShutdownTimeout.D())
	}
	if cfg.Kubernetes.Namespace != "*" || !cfg.RateLimit.Enabled {
		t.Errorf("operator config not merged: %+v %+v", cfg.Kubernetes, cfg.RateLimit)
	}
	lobby := get(docs["ConfigMap/mc-infrarust-servers"], "data", "lobby.toml").(string)
	if s, err := config.ParseServer([]byte(lobby), "lobby.toml", cfg); err != nil || s.Domains[0] != "lobby.example.com" {
		t.Errorf("server file from values: %v", err)
	}
}

// The plain manifests: valid YAML, the fields the API server requires, the same
// pod spec and rights as the chart, and a config that loads.
func TestKubernetesManifests(t *testing.T) {
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) < 7 {
		t.Fatalf("manifests: %v %v", files, err)
	}
	docs := map[string]map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("%s: %v", f, err)
				}
				break
			}
			if doc == nil || doc["kind"] == "Kustomization" {
				continue
			}
			docs[requireObject(t, f, doc)] = doc
		}
	}
	var kz map[string]any
	readYAML(t, "kubernetes/kustomization.yaml", &kz)
	for _, r := range get(kz, "resources").([]any) {
		if _, err := os.Stat(filepath.Join("kubernetes", r.(string))); err != nil {
			t.Errorf("kustomization lists %v: %v", r, err)
		}
	}
	checkDeployment(t, docs["Deployment/infrarust"])
	if got := rules(docs["Role/infrarust"]); !slices.Equal(got, wantRules) {
		t.Errorf("rbac.yaml rules\n got %q\nwant %q", got, wantRules)
	}
	if get(docs["RoleBinding/infrarust"], "subjects", 0, "name") != get(docs["Deployment/infrarust"], "spec", "template", "spec", "serviceAccountName") {
		t.Error("the RoleBinding must name the Deployment's service account")
	}
	cfg := loadRenderedConfig(t, get(docs["ConfigMap/infrarust"], "data", "infrarust.toml").(string))
	if !cfg.Kubernetes.Enabled {
		t.Error("the manifests' config must turn [kubernetes] discovery on")
	}
	// The example server is one the discovery would pick up and scale to zero.
	svc := docs["Service/survival"]
	ann := get(svc, "metadata", "annotations").(map[string]any)
	if ann["infrarust.io/domains"] == nil || ann["infrarust.io/workload"] != "statefulset/survival" || get(docs["StatefulSet/survival"], "spec", "replicas") != 0 {
		t.Errorf("example-server.yaml: %v", ann)
	}
	if docs["ServiceMonitor/infrarust"] == nil || docs["PodDisruptionBudget/infrarust"] == nil {
		t.Error("servicemonitor.yaml and pdb.yaml")
	}
}

// The renderer above agrees with helm itself: deploy/testdata/helm-*.yaml were
// written by `helm template` (v3.19.0, deploy/helm/golden.sh). A chart change
// that this test flags needs those files regenerated with helm.
func TestHelmRendererAgreesWithHelm(t *testing.T) {
	key := map[string]any{"apiKey": "golden-placeholder-not-a-real-key"}
	cases := map[string]map[string]any{
		"testdata/helm-default.yaml": {"admin": key},
		"testdata/helm-options.yaml": {
			"admin":     key,
			"discovery": map[string]any{"namespace": "*"},
			"metrics":   map[string]any{"serviceMonitor": map[string]any{"enabled": true}},
			"servers":   map[string]any{"lobby": `domains = ["lobby.example.com"]`},
			"config":    "[rate_limit]\nenabled = true",
		},
	}
	for file, values := range cases {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		helm := map[string]map[string]any{}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var d map[string]any
			if err := dec.Decode(&d); err != nil {
				break
			}
			if d != nil {
				helm[requireObject(t, file, d)] = d
			}
		}
		ours := renderChart(t, values)
		if len(helm) < 8 || len(ours) != len(helm) {
			t.Errorf("%s: helm rendered %d objects, the test renderer %d", file, len(helm), len(ours))
		}
		for k, h := range helm {
			if !reflect.DeepEqual(h, ours[k]) {
				hb, _ := yaml.Marshal(h)
				ob, _ := yaml.Marshal(ours[k])
				t.Errorf("%s: %s differs from helm's (regenerate with deploy/helm/golden.sh if the chart changed):\nhelm:\n%s\nhere:\n%s", file, k, hb, ob)
			}
		}
	}
}

// forwarding.existingSecret gives every pod one forwarding secret: mounted
// from the Secret and named by INFRARUST_FORWARDING_SECRET_FILE; left empty,
// the pod has neither.
func TestHelmForwardingSecret(t *testing.T) {
	env := func(d map[string]any) map[string]string {
		out := map[string]string{}
		list, _ := get(d, "spec", "template", "spec", "containers", 0, "env").([]any)
		for _, e := range list {
			out[fmt.Sprint(get(e, "name"))] = fmt.Sprint(get(e, "value"))
		}
		return out
	}
	plain := renderChart(t, nil)["Deployment/mc-infrarust"]
	if _, ok := env(plain)["INFRARUST_FORWARDING_SECRET_FILE"]; ok {
		t.Error("the default chart names a forwarding secret file")
	}
	d := renderChart(t, map[string]any{"forwarding": map[string]any{"existingSecret": "mc-forwarding", "secretKey": "velocity"}})["Deployment/mc-infrarust"]
	if got := env(d)["INFRARUST_FORWARDING_SECRET_FILE"]; got != "/run/secrets/forwarding/velocity" {
		t.Errorf("INFRARUST_FORWARDING_SECRET_FILE = %q", got)
	}
	found := false
	vols, _ := get(d, "spec", "template", "spec", "volumes").([]any)
	for _, v := range vols {
		if get(v, "name") == "forwarding-secret" && get(v, "secret", "secretName") == "mc-forwarding" {
			found = true
		}
	}
	mounted := false
	mounts, _ := get(d, "spec", "template", "spec", "containers", 0, "volumeMounts").([]any)
	for _, m := range mounts {
		if get(m, "name") == "forwarding-secret" && get(m, "mountPath") == "/run/secrets/forwarding" {
			mounted = true
		}
	}
	if !found || !mounted {
		t.Errorf("the Secret is not mounted: volume %v, mount %v", found, mounted)
	}
}

// chartFiles is the chart's .Files: Get reads a file of the chart, as helm's.
type chartFiles string

func (dir chartFiles) Get(name string) string {
	b, err := os.ReadFile(filepath.Join(string(dir), name))
	if err != nil {
		return ""
	}
	return string(b)
}

// The chart's PrometheusRule is off by default, and on it carries exactly the
// rules of deploy/prometheus/alerts.yml, whose copy the chart ships.
func TestHelmPrometheusRule(t *testing.T) {
	canonical, err := os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	if chartFiles(chartDir).Get("files/alerts.yml") != string(canonical) {
		t.Fatal("deploy/helm/infrarust/files/alerts.yml differs from deploy/prometheus/alerts.yml: copy it over")
	}
	if renderChart(t, nil)["PrometheusRule/mc-infrarust"] != nil {
		t.Fatal("the PrometheusRule is on by default")
	}
	pr := renderChart(t, map[string]any{"metrics": map[string]any{"prometheusRule": map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}}}})["PrometheusRule/mc-infrarust"]
	if pr == nil || get(pr, "metadata", "labels", "release") != "prom" {
		t.Fatalf("PrometheusRule: %v", pr)
	}
	var want map[string]any
	if err := yaml.Unmarshal(canonical, &want); err != nil {
		t.Fatal(err)
	}
	got, _ := yaml.Marshal(get(pr, "spec"))
	exp, _ := yaml.Marshal(want)
	if string(got) != string(exp) {
		t.Fatalf("the PrometheusRule's spec is not alerts.yml:\n%s", got)
	}
}

package deploy

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/infrarust-go/infrarust/internal/config"
)

// fleet: an existing Secret's URL (mounted, read with "file:") or a bundled
// Redis (its own Deployment and Service, never selected by the player Service);
// persistence.existingClaim puts data_dir on a PVC; extra volumes are mounted.
func TestHelmFleetAndVolumes(t *testing.T) {
	off := renderChart(t, nil)
	if off["Deployment/mc-infrarust-redis"] != nil {
		t.Fatal("a Redis is rendered with the fleet off")
	}
	if cfg := loadRenderedConfig(t, get(off["ConfigMap/mc-infrarust"], "data", "infrarust.toml").(string)); cfg.Fleet.Enabled() {
		t.Fatal("[fleet] on by default")
	}

	sec := renderChart(t, map[string]any{
		"fleet":             map[string]any{"enabled": true, "existingSecret": "mc-redis"},
		"persistence":       map[string]any{"existingClaim": "mc-data"},
		"extraVolumes":      []any{map[string]any{"name": "plugins", "configMap": map[string]any{"name": "mc-plugins"}}},
		"extraVolumeMounts": []any{map[string]any{"name": "plugins", "mountPath": "/etc/infrarust/plugins"}},
	})
	toml := get(sec["ConfigMap/mc-infrarust"], "data", "infrarust.toml").(string)
	if !strings.Contains(toml, `redis = "file:/run/secrets/fleet/url"`) {
		t.Fatalf("[fleet] from the Secret:\n%s", toml)
	}
	d := sec["Deployment/mc-infrarust"]
	vols := map[string]any{}
	list, _ := get(d, "spec", "template", "spec", "volumes").([]any)
	for _, v := range list {
		vols[fmt.Sprint(get(v, "name"))] = v
	}
	if get(vols["fleet-redis"], "secret", "secretName") != "mc-redis" || get(vols["data"], "persistentVolumeClaim", "claimName") != "mc-data" ||
		get(vols["plugins"], "configMap", "name") != "mc-plugins" {
		t.Fatalf("volumes: %v", vols)
	}
	mounts := map[string]bool{}
	ms, _ := get(d, "spec", "template", "spec", "containers", 0, "volumeMounts").([]any)
	for _, m := range ms {
		mounts[fmt.Sprint(get(m, "mountPath"))] = true
	}
	if !mounts["/run/secrets/fleet"] || !mounts["/etc/infrarust/plugins"] {
		t.Fatalf("mounts: %v", mounts)
	}

	bundled := renderChart(t, map[string]any{"fleet": map[string]any{"enabled": true, "bundledRedis": map[string]any{"enabled": true}}})
	cfg := loadRenderedConfig(t, get(bundled["ConfigMap/mc-infrarust"], "data", "infrarust.toml").(string))
	if cfg.Fleet.Redis != "env:INFRARUST_REDIS_URL" {
		t.Fatalf("[fleet] redis = %q", cfg.Fleet.Redis)
	}
	r := bundled["Deployment/mc-infrarust-redis"]
	svc := bundled["Service/mc-infrarust-redis"]
	if r == nil || svc == nil {
		t.Fatalf("no bundled Redis: %v", slices.Sorted(maps.Keys(bundled)))
	}
	player := get(bundled["Service/mc-infrarust"], "spec", "selector").(map[string]any)
	podLabels := get(r, "spec", "template", "metadata", "labels").(map[string]any)
	matches := true
	for k, v := range player {
		if podLabels[k] != v {
			matches = false
		}
	}
	if matches {
		t.Fatal("the player Service selects the Redis pod")
	}
}

// The fleet component of the plain manifests: its Redis is never selected by
// the player Services, its patch names the base's Deployment and container,
// and the variable it sets is one the loader reads as [fleet] redis.
func TestKubernetesFleetComponent(t *testing.T) {
	var kz map[string]any
	readYAML(t, "kubernetes/fleet/kustomization.yaml", &kz)
	if kz["kind"] != "Component" {
		t.Fatalf("kind %v, want Component", kz["kind"])
	}
	docs := map[string]map[string]any{}
	for _, r := range get(kz, "resources").([]any) {
		data, err := os.ReadFile(filepath.Join("kubernetes/fleet", r.(string)))
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range strings.Split(string(data), "\n---") {
			var doc map[string]any
			if err := yaml.Unmarshal([]byte(part+"\n"), &doc); err != nil || doc == nil {
				t.Fatalf("%v: %v", r, err)
			}
			docs[requireObject(t, r.(string), doc)] = doc
		}
	}
	redis := docs["Deployment/infrarust-redis"]
	if redis == nil || docs["Service/infrarust-redis"] == nil {
		t.Fatalf("component objects: %v", slices.Sorted(maps.Keys(docs)))
	}
	var svc map[string]any
	readYAML(t, "kubernetes/service.yaml", &svc) // the first document: the player Service
	podLabels := get(redis, "spec", "template", "metadata", "labels").(map[string]any)
	selected := true
	for k, v := range get(svc, "spec", "selector").(map[string]any) {
		selected = selected && podLabels[k] == v
	}
	if selected {
		t.Fatal("the player Service selects the fleet's Redis pod")
	}
	var patch map[string]any
	readYAML(t, "kubernetes/fleet/"+get(kz, "patches", 0, "path").(string), &patch)
	if get(patch, "metadata", "name") != "infrarust" || get(patch, "spec", "template", "spec", "containers", 0, "name") != "infrarust" {
		t.Fatalf("the patch does not name the base's Deployment and container: %v", patch)
	}
	env := get(patch, "spec", "template", "spec", "containers", 0, "env", 0)
	name, value := fmt.Sprint(get(env, "name")), fmt.Sprint(get(env, "value"))
	read := false
	for _, o := range config.EnvOverrides {
		read = read || (o.Name == name && o.Key == "fleet.redis")
	}
	if !read || !strings.HasPrefix(value, "redis://infrarust-redis:6379") {
		t.Fatalf("the patch sets %s=%s", name, value)
	}
	t.Setenv(name, value)
	cfg, err := config.Parse([]byte(""), "k.toml")
	if err != nil || !cfg.Fleet.Enabled() || cfg.Fleet.Redis != value {
		t.Fatalf("%s does not join the fleet: %+v %v", name, cfg.Fleet, err)
	}
}

// The chart pins the image it was released with (appVersion, the image's
// default tag): never "latest", which would change under a running release.
func TestHelmPinsAppVersion(t *testing.T) {
	var chart map[string]any
	readYAML(t, filepath.Join(chartDir, "Chart.yaml"), &chart)
	v := fmt.Sprint(chart["appVersion"])
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(v) {
		t.Fatalf("appVersion %q is not a pinned release version", v)
	}
	d := renderChart(t, nil)["Deployment/mc-infrarust"]
	if img := get(d, "spec", "template", "spec", "containers", 0, "image"); img != "ghcr.io/infrarust-go/infrarust:"+v {
		t.Fatalf("default image %v, want the appVersion's", img)
	}
}

package config

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// What a reload of infrarust.toml can change in a running proxy: everything
// but the keys below, which are bound to a socket, a goroutine or a store
// opened at start. A reload names them (in the log and `config check --diff`)
// and keeps their running values until a restart.
var restartKeys = []string{
	"bind", "max_connections", "forwarder", "servers_dir", "keepalive",
	"web", "telemetry", "docker", "kubernetes", "fleet",
	"auth", // the session client and its settings are built at start
	"active_health.max_concurrent",
}

// NeedsRestart reports whether key (a dotted path, as Fingerprint names
// them) changes only at a restart.
func NeedsRestart(key string) bool {
	for _, k := range restartKeys {
		if key == k || strings.HasPrefix(key, k+".") {
			return true
		}
	}
	return false
}

// secretKeys hold credentials: their digest is a constant, so the admin API
// that serves fingerprints gives nothing to guess them from (a change to one
// is not shown by `config check --diff`; a reload still applies it).
var secretKeys = []string{"web.api_key", "forwarding.secret", "fleet.redis", "telemetry.headers"}

// Fingerprint is every key of c (servers aside) with a digest of its value:
// two configurations differ at a key when their digests do. A digest shows
// no value, and credentials are not digested at all (secretKeys; a webhook's
// secret is left out of the webhooks' digest).
func Fingerprint(c *Config) map[string]string {
	out := map[string]string{}
	fingerprint(reflect.ValueOf(c).Elem(), "", out)
	return out
}

func fingerprint(v reflect.Value, prefix string, out map[string]string) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("toml"), ",")[0]
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		fv := v.Field(i)
		if fv.Kind() == reflect.Struct && !isLeafStruct(fv) {
			fingerprint(fv, key, out)
			continue
		}
		if slices.Contains(secretKeys, key) {
			out[key] = "secret"
			continue
		}
		v := fv.Interface()
		if hooks, ok := v.([]Webhook); ok {
			blank := slices.Clone(hooks)
			for i := range blank {
				blank[i].Secret = ""
			}
			v = blank
		}
		b, _ := json.Marshal(v)
		sum := sha256.Sum256(b)
		out[key] = hex.EncodeToString(sum[:8])
	}
}

// isLeafStruct is a struct value that is one setting (a Duration, a time).
func isLeafStruct(v reflect.Value) bool {
	switch v.Interface().(type) {
	case json.Marshaler, encoding.TextMarshaler:
		return true
	}
	return v.Type().NumField() == 0
}

// Changed lists the keys whose values differ between two fingerprints.
func Changed(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// HoldRestartKeys puts running's values of the restart-only keys into next
// and returns those that differed (what a restart would change).
func HoldRestartKeys(running, next *Config) []string {
	var held []string
	for _, k := range Changed(Fingerprint(running), Fingerprint(next)) {
		if NeedsRestart(k) {
			held = append(held, k)
		}
	}
	// The default forwarding secret file is in data_dir, which stays: so does it.
	if next.Forwarding.SecretFile == filepath.Join(next.Web.DataDir, DefaultSecretName) {
		next.Forwarding.SecretFile = running.Forwarding.SecretFile
	}
	// Copied whether or not they differ: a credential's change is not seen
	// in the digests, and it is no more live than the rest of its table.
	rv, nv := reflect.ValueOf(running).Elem(), reflect.ValueOf(next).Elem()
	for i := range rv.NumField() {
		tag := strings.Split(rv.Type().Field(i).Tag.Get("toml"), ",")[0]
		if tag != "" && tag != "-" && slices.Contains(restartKeys, tag) {
			nv.Field(i).Set(rv.Field(i))
		}
	}
	next.ActiveHealth.MaxConcurrent = running.ActiveHealth.MaxConcurrent
	next.ServersPath = running.ServersPath
	return held
}

package config

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
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

// Fingerprint is every key of c (servers aside) with a digest of its value:
// two configurations differ at a key when their digests do. A digest shows
// no value (keys and secrets stay out of the admin API that serves it).
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
		b, _ := json.Marshal(fv.Interface())
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
	if len(held) == 0 {
		return nil
	}
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

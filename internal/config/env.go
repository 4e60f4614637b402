package config

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Containers are configured through their environment, so a few keys of
// infrarust.toml can be set there too. The order is always flag > environment >
// file > default: the loader applies the environment over the file, and `serve
// --bind` applies over both. Each variable can instead be given as NAME_FILE, the
// path of a file holding the value (Docker and Kubernetes secrets), so a key never
// has to sit in the environment itself.

// EnvOverride is one key of infrarust.toml that an environment variable sets.
type EnvOverride struct {
	// Name is the variable (INFRARUST_BIND); Name+"_FILE" names a file instead.
	Name string
	// Key is the dotted key it replaces (web.bind), for docs and errors.
	Key string
	set func(c *Config, v string)
}

// EnvOverrides lists the variables the loader reads, in the order the docs show them.
var EnvOverrides = []EnvOverride{
	{Name: "INFRARUST_BIND", Key: "bind", set: func(c *Config, v string) { c.Bind = v }},
	{Name: "INFRARUST_SERVERS_DIR", Key: "servers_dir", set: func(c *Config, v string) { c.ServersDir = v }},
	{Name: "INFRARUST_ADMIN_BIND", Key: "web.bind", set: func(c *Config, v string) { c.Web.Bind = v }},
	{Name: APIKeyEnv, Key: "web.api_key", set: func(c *Config, v string) { c.Web.APIKey = v }},
	{Name: "INFRARUST_DATA_DIR", Key: "web.data_dir", set: func(c *Config, v string) { c.Web.DataDir = v }},
	{Name: ForwardingSecretEnv, Key: "forwarding.secret_file", set: func(c *Config, v string) { c.Forwarding.Secret = v }},
	{Name: "INFRARUST_FLEET_REDIS", Key: "fleet.redis", set: func(c *Config, v string) { c.Fleet.Redis = v }},
	{Name: FleetSecretEnv, Key: "fleet.secret_file", set: func(c *Config, v string) { c.Fleet.Secret = v }},
	{Name: "INFRARUST_DOCKER", Key: "docker.enabled", set: func(c *Config, v string) { c.Docker.Enabled, _ = parseEnvBool(v) }},
	{Name: "INFRARUST_DOCKER_ENDPOINT", Key: "docker.endpoint", set: func(c *Config, v string) { c.Docker.Endpoint = v }},
	{Name: "INFRARUST_KUBERNETES", Key: "kubernetes.enabled", set: func(c *Config, v string) { c.Kubernetes.Enabled, _ = parseEnvBool(v) }},
}

// parseEnvBool reads a switch of the environment: true/false, 1/0, yes/no, on/off.
func parseEnvBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a switch: use true or false", v)
}

// ForwardingSecretEnv is the forwarding secret itself (or, as _FILE, a file
// holding it, e.g. a Kubernetes secret every pod mounts): it replaces the
// secret file.
const ForwardingSecretEnv = "INFRARUST_FORWARDING_SECRET"

// maxEnvFileBytes bounds a *_FILE read: the values are keys and paths, not documents.
const maxEnvFileBytes = 64 << 10

// EnvValue reads name from the environment, or from the file that name+"_FILE"
// points at; ok is false when neither is set. Setting both is an error, because
// which one wins would be a guess. Surrounding white space (a file's trailing
// newline) is dropped.
func EnvValue(name string, lookup func(string) (string, bool)) (v string, ok bool, err error) {
	direct, hasDirect := lookup(name)
	path, hasFile := lookup(name + "_FILE")
	direct, path = strings.TrimSpace(direct), strings.TrimSpace(path)
	hasDirect, hasFile = hasDirect && direct != "", hasFile && path != ""
	switch {
	case hasDirect && hasFile:
		return "", false, fmt.Errorf("both %s and %s_FILE are set; keep one", name, name)
	case hasDirect:
		return direct, true, nil
	case !hasFile:
		return "", false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false, fmt.Errorf("%s_FILE: %w (mount the secret there, or unset %s_FILE)", name, err, name)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEnvFileBytes+1))
	if err != nil {
		return "", false, fmt.Errorf("%s_FILE: read %s: %w", name, path, err)
	}
	if len(data) > maxEnvFileBytes {
		return "", false, fmt.Errorf("%s_FILE: %s is larger than %d KiB; it should hold one value", name, path, maxEnvFileBytes>>10)
	}
	v = strings.TrimSpace(string(data))
	if v == "" {
		return "", false, fmt.Errorf("%s_FILE: %s is empty", name, path)
	}
	return v, true, nil
}

// applyEnv sets the keys of EnvOverrides from the environment over what the file
// said. A value that cannot be used is reported as the variable's problem, and its
// key is marked so validation does not report it again under the file's line.
func (c *Config) applyEnv(r *report, lookup func(string) (string, bool)) {
	for _, o := range EnvOverrides {
		v, ok, err := EnvValue(o.Name, lookup)
		if err == nil && ok {
			err = checkEnvValue(o, v)
		}
		if err != nil {
			r.errs = append(r.errs, &Error{File: "environment", Key: o.Key, Msg: err.Error()})
			r.bad[o.Key] = true
			continue
		}
		if ok {
			o.set(c, v)
		}
	}
}

// checkEnvValue refuses what validation would refuse, so the message names the
// variable the value came from instead of the file's line.
func checkEnvValue(o EnvOverride, v string) error {
	switch o.Key {
	case "bind", "web.bind":
		if err := CheckBind(v); err != nil {
			return fmt.Errorf("%s: %w", o.Name, err)
		}
	case "docker.enabled", "kubernetes.enabled":
		if _, err := parseEnvBool(v); err != nil {
			return fmt.Errorf("%s: %w", o.Name, err)
		}
	case "fleet.secret_file":
		if len(v) < MinFleetSecretLen {
			return fmt.Errorf("%s is %d characters; use at least %d (e.g. `openssl rand -hex 32`, the same on every proxy)", o.Name, len(v), MinFleetSecretLen)
		}
	case "web.api_key":
		if len(v) < MinAPIKeyLen {
			return fmt.Errorf("%s is %d characters; use at least %d (e.g. `openssl rand -hex 32`)", o.Name, len(v), MinAPIKeyLen)
		}
	}
	return nil
}

package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// ForwarderKind names a forwarder implementation ("forwarder" key; ForwarderKind).
type ForwarderKind string

// The forwarder kinds a setting may name.
const (
	ForwarderAuto      ForwarderKind = "auto"      // epoll where available, else goroutine
	ForwarderGoroutine ForwarderKind = "goroutine" // two io.Copy goroutines per session; every platform
	ForwarderEpoll     ForwarderKind = "epoll"     // epoll readiness set and shard goroutines; Linux only
)

// ParseForwarderKind checks a setting's value; the empty string means auto.
func ParseForwarderKind(s string) (ForwarderKind, error) {
	switch k := ForwarderKind(s); k {
	case "":
		return ForwarderAuto, nil
	case ForwarderAuto, ForwarderGoroutine, ForwarderEpoll:
		return k, nil
	}
	return "", fmt.Errorf("unknown forwarder %q: use %q, %q or %q", s, ForwarderAuto, ForwarderGoroutine, ForwarderEpoll)
}

// Strategy is how a server picks among its addresses ("balance" key;
// Strategy).
type Strategy string

// The strategies.
const (
	// FirstAvailable tries addresses in config order and ignores weights; the default, so upgrades change nothing.
	FirstAvailable Strategy = "first_available"
	// RoundRobin is nginx's smooth weighted round-robin, which spreads picks evenly instead of in bursts.
	RoundRobin Strategy = "round_robin"
	// LeastConn sends a login to the address with the fewest players (including negotiating ones) per unit of weight.
	LeastConn Strategy = "least_conn"
	// Latency prefers the address with the lowest measured connect time, for replicas at different distances.
	Latency Strategy = "latency"
	// Random picks an address at random in proportion to its weight, for operators who want no pattern at all.
	Random Strategy = "random"
)

// StrategyNames are the strategies' configuration names, for messages and docs.
func StrategyNames() []string {
	return []string{string(FirstAvailable), string(RoundRobin), string(LeastConn), string(Latency), string(Random)}
}

// ParseStrategy validates a config value so a typo is reported at load time instead of silently balancing differently.
// The empty string means the default, first_available.
func ParseStrategy(s string) (Strategy, error) {
	switch v := Strategy(strings.ToLower(strings.TrimSpace(s))); v {
	case "":
		return FirstAvailable, nil
	case FirstAvailable, RoundRobin, LeastConn, Latency, Random:
		return v, nil
	}
	return "", fmt.Errorf("unknown balance strategy %q: use first_available, round_robin, least_conn, latency or random", s)
}

// HealthKind selects how an address is probed ([active_health] kind; HealthKind).
type HealthKind string

const (
	// HealthTCP opens and closes a connection: exactly what a login dial does, so it cannot disagree with reality.
	HealthTCP HealthKind = "tcp"
	// HealthStatusPing runs a Minecraft status exchange, proving the server answers; the proxy supplies it.
	HealthStatusPing HealthKind = "status_ping"
)

// ParseHealthKind validates the `kind` config key; empty means tcp.
func ParseHealthKind(s string) (HealthKind, error) {
	switch k := HealthKind(strings.ToLower(strings.TrimSpace(s))); k {
	case "":
		return HealthTCP, nil
	case HealthTCP, HealthStatusPing:
		return k, nil
	}
	return "", fmt.Errorf("unknown active_health kind %q: use tcp or status_ping", s)
}

// ParsePrefix turns one entry of an address list (ip_filter, trusted
// proxies) into a canonical prefix: an IP address or a CIDR.
func ParsePrefix(entry string) (netip.Prefix, error) {
	s := strings.TrimSpace(entry)
	if s == "" {
		return netip.Prefix{}, fmt.Errorf("empty entry: use an IP address like 203.0.113.7 or a CIDR like 203.0.113.0/24")
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a valid CIDR (want e.g. 203.0.113.0/24 or 2001:db8::/32): %w", entry, err)
		}
		return canonicalPrefix(p), nil
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a valid IP address or CIDR (want e.g. 203.0.113.7 or 203.0.113.0/24): %w", entry, err)
	}
	if ip.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q has an IPv6 zone; remove the %%%s suffix", entry, ip.Zone())
	}
	return canonicalPrefix(netip.PrefixFrom(ip, ip.BitLen())), nil
}

// canonicalPrefix masks host bits and turns IPv4-mapped IPv6 ranges into
// IPv4 so they match the unmapped client addresses a filter looks up.
func canonicalPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked()
}

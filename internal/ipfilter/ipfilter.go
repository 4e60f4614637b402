// Package ipfilter decides, before any byte is parsed, whether a client
// address may talk to the proxy at all, from operator allow and deny lists.
package ipfilter

import (
	"fmt"
	"net/netip"
	"strings"
)

// Filter holds parsed allow and deny ranges. It is immutable after New, so
// one value can be shared by every connection goroutine without locking.
type Filter struct {
	allow []netip.Prefix
	deny  []netip.Prefix
}

// New parses allow and deny lists of CIDRs or single addresses (IPv4 or
// IPv6) so a config mistake is reported at load time, naming the bad entry.
// IPv4-mapped IPv6 entries are stored as IPv4, and host bits in a CIDR are
// ignored ("10.1.2.3/8" means 10.0.0.0/8).
func New(allow, deny []string) (*Filter, error) {
	a, err := parseList("allow", allow)
	if err != nil {
		return nil, err
	}
	d, err := parseList("deny", deny)
	if err != nil {
		return nil, err
	}
	return &Filter{allow: a, deny: d}, nil
}

func parseList(list string, entries []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(entries))
	for i, e := range entries {
		p, err := ParsePrefix(e)
		if err != nil {
			return nil, fmt.Errorf("ip filter %s list entry %d: %w", list, i+1, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// ParsePrefix turns one list entry into a canonical prefix; it is exported
// so other operator-facing lists (trusted proxies, per-server filters) accept
// exactly the same syntax.
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
		return canonical(p), nil
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a valid IP address or CIDR (want e.g. 203.0.113.7 or 203.0.113.0/24): %w", entry, err)
	}
	if ip.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q has an IPv6 zone; remove the %%%s suffix", entry, ip.Zone())
	}
	return canonical(netip.PrefixFrom(ip, ip.BitLen())), nil
}

// canonical masks host bits and turns IPv4-mapped IPv6 ranges into IPv4 so
// they match the unmapped client addresses Allowed looks up.
func canonical(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked()
}

// Allowed reports whether ip may connect: a deny match always rejects, a
// non-empty allow list admits only its ranges, and a nil *Filter (no filter
// configured) admits everyone.
func (f *Filter) Allowed(ip netip.Addr) bool {
	if f == nil {
		return true
	}
	ip = ip.Unmap().WithZone("")
	if contains(f.deny, ip) {
		return false
	}
	return len(f.allow) == 0 || contains(f.allow, ip)
}

func contains(list []netip.Prefix, ip netip.Addr) bool {
	for _, p := range list {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Empty reports whether the filter has no rules, so callers can skip it.
func (f *Filter) Empty() bool { return f == nil || len(f.allow)+len(f.deny) == 0 }

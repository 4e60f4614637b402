// Package ipfilter decides, before any byte is parsed, whether a client
// address may talk to the proxy at all, from operator allow and deny lists.
package ipfilter

import (
	"fmt"
	"github.com/infrarust-go/infrarust/internal/config"
	"net/netip"
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

// ParsePrefix turns one list entry into a canonical prefix, with the same
// syntax as every operator-facing address list (config.ParsePrefix).
func ParsePrefix(entry string) (netip.Prefix, error) { return config.ParsePrefix(entry) }

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

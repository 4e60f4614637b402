package proxy

import (
	"path"
	"sort"
	"strings"
)

// NormalizeHost turns the handshake's server address into the key the router
// matches: cut at the first NUL (Forge's "\0FML\0" markers and similar), drop a
// port and a trailing dot, lowercase.
func NormalizeHost(addr string) string {
	if i := strings.IndexByte(addr, 0); i >= 0 {
		addr = addr[:i]
	}
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && !strings.Contains(addr[:i], ":") {
		addr = addr[:i] // "host:port"; bare IPv6 literals have more than one colon
	}
	addr = strings.TrimSuffix(strings.TrimSpace(addr), ".")
	for i := 0; i < len(addr); i++ {
		if c := addr[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(addr)
		}
	}
	return addr
}

// router maps a normalised hostname to a server id. It is immutable: a reload
// builds a new one and swaps it in.
type router struct {
	exact     map[string]string
	wildcards []wildcard
}

type wildcard struct {
	pattern string
	server  string
	literal int    // characters that are not * or ?
	tail    string // the literal end after the last wildcard: a cheap filter before path.Match
}

// newRouter builds the lookup. Wildcards are tried most specific first: more literal
// characters first, then fewer '*', then the pattern itself in byte order, so the
// answer never depends on file order.
func newRouter(domains map[string]string) *router {
	r := &router{exact: map[string]string{}}
	for d, id := range domains {
		if strings.ContainsAny(d, "*?") {
			r.wildcards = append(r.wildcards, wildcard{
				pattern: d, server: id,
				literal: len(d) - strings.Count(d, "*") - strings.Count(d, "?"),
				tail:    d[strings.LastIndexAny(d, "*?")+1:],
			})
			continue
		}
		r.exact[d] = id
	}
	sort.Slice(r.wildcards, func(i, j int) bool {
		a, b := r.wildcards[i], r.wildcards[j]
		if a.literal != b.literal {
			return a.literal > b.literal
		}
		if ca, cb := strings.Count(a.pattern, "*"), strings.Count(b.pattern, "*"); ca != cb {
			return ca < cb
		}
		return a.pattern < b.pattern
	})
	return r
}

// lookup returns the server id for a normalised host.
func (r *router) lookup(host string) (string, bool) {
	if id, ok := r.exact[host]; ok {
		return id, true
	}
	for _, w := range r.wildcards {
		if !strings.HasSuffix(host, w.tail) {
			continue // most patterns of a large network fail here, without path.Match
		}
		// path.Match treats '/' specially and supports [] classes; hostnames have
		// neither (config validation allows only [a-z0-9.-*?]).
		if ok, _ := path.Match(w.pattern, host); ok {
			return w.server, true
		}
	}
	return "", false
}

// Package bans keeps the operator's ban list (IPs and CIDRs, usernames,
// UUIDs), answers "is this connection banned?" on the hot path, and persists
// the list as JSON so bans survive restarts.
//
// Writes are durable before they are visible: Add and Remove write the whole
// list to a temporary file in the same directory, fsync it, rename it over the
// old file and fsync the directory, and only then publish the change to
// readers. A crash leaves either the old or the new file, never a torn one;
// a leftover temporary file is removed at the next Open. Readers never wait
// for a disk write.
package bans

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/infrarust-go/infrarust/internal/atomicfile"
)

// Type says what a ban matches, so one store covers every kind of ban.
type Type string

const (
	// TypeIP bans a single address or a CIDR range.
	TypeIP Type = "ip"
	// TypeUsername bans a player name, case-insensitively.
	TypeUsername Type = "username"
	// TypeUUID bans a player UUID, which survives name changes.
	TypeUUID Type = "uuid"
)

// ErrNotFound lets callers (admin API: 404) tell a missing ban from a failure.
var ErrNotFound = errors.New("ban not found")

// Ban is one entry of the list, in the shape the admin API and the JSON file
// share.
type Ban struct {
	Type      Type       `json:"type"`
	Value     string     `json:"value"`
	Reason    string     `json:"reason"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	CreatedBy string     `json:"created_by"`
}

// expired reports whether the ban no longer applies at now.
func (b Ban) expired(now time.Time) bool {
	return b.ExpiresAt != nil && !now.Before(*b.ExpiresAt)
}

// KickMessage is the text shown to a banned player, including when a
// temporary ban ends so they know whether to wait or appeal.
func (b Ban) KickMessage(now time.Time) string {
	msg := "You are banned"
	if r := strings.TrimSpace(b.Reason); r != "" {
		msg += ": " + r
	} else {
		msg += "."
	}
	if b.ExpiresAt != nil && now.Before(*b.ExpiresAt) {
		msg += fmt.Sprintf("\nBan ends in %s (%s)",
			FormatRemaining(b.ExpiresAt.Sub(now)), b.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return msg
}

// FormatRemaining renders a time left, rounded up to the second, as its two
// largest units ("6d 23h", "5m 3s", "42s"), the way a ban's length is shown to
// players and operators alike.
func FormatRemaining(d time.Duration) string {
	secs := int64((d + time.Second - 1) / time.Second)
	units := []struct {
		n      int64
		suffix string
	}{{secs / 86400, "d"}, {secs % 86400 / 3600, "h"}, {secs % 3600 / 60, "m"}, {secs % 60, "s"}}
	for i, u := range units {
		if u.n == 0 && i < len(units)-1 {
			continue
		}
		out := fmt.Sprintf("%d%s", u.n, u.suffix)
		if i+1 < len(units) && units[i+1].n > 0 {
			out += fmt.Sprintf(" %d%s", units[i+1].n, units[i+1].suffix)
		}
		return out
	}
	return "0s"
}

// normalize validates b and rewrites its value to the canonical form used as
// the identity of the ban, so "Notch" and "notch" are one ban.
func normalize(b Ban) (Ban, error) {
	v := strings.TrimSpace(b.Value)
	switch b.Type {
	case TypeIP:
		p, err := parseIPValue(v)
		if err != nil {
			return Ban{}, err
		}
		if p.IsSingleIP() {
			v = p.Addr().String()
		} else {
			v = p.String()
		}
	case TypeUsername:
		if err := ValidUsername(v); err != nil {
			return Ban{}, err
		}
		v = strings.ToLower(v)
	case TypeUUID:
		var buf [36]byte
		if !canonicalUUID(v, &buf) {
			return Ban{}, fmt.Errorf("invalid UUID %s: want 32 hex digits, optionally with dashes (8-4-4-4-12)", quoted(b.Value))
		}
		v = string(buf[:])
	default:
		return Ban{}, fmt.Errorf("invalid ban type %s: want %q, %q or %q", quoted(string(b.Type)), TypeIP, TypeUsername, TypeUUID)
	}
	b.Value = v
	if b.ExpiresAt != nil {
		e := b.ExpiresAt.UTC().Round(0)
		b.ExpiresAt = &e
	}
	b.CreatedAt = b.CreatedAt.UTC().Round(0)
	return b, nil
}

// parseIPValue accepts an address or a CIDR and returns the masked prefix,
// with IPv4-mapped IPv6 turned into IPv4 so it matches unmapped clients.
func parseIPValue(v string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(v, "/") {
		var err error
		if p, err = netip.ParsePrefix(v); err != nil {
			return p, fmt.Errorf("invalid CIDR %s (want e.g. 203.0.113.0/24)", quoted(v))
		}
	} else {
		ip, err := netip.ParseAddr(v)
		if err != nil {
			return p, fmt.Errorf("invalid IP %s (want e.g. 203.0.113.7 or a CIDR)", quoted(v))
		}
		if ip.Zone() != "" {
			return p, fmt.Errorf("invalid IP %s: remove the IPv6 zone", quoted(v))
		}
		p = netip.PrefixFrom(ip, ip.BitLen())
	}
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// ValidUsername accepts what a ban can name: 1 to 16 printable ASCII
// characters without spaces. Offline-mode servers see names beyond Mojang's
// [A-Za-z0-9_], and an operator must be able to ban them: the proxy admits no
// name this refuses.
func ValidUsername(v string) error {
	if len(v) == 0 || len(v) > 16 {
		return fmt.Errorf("invalid username %s: want 1 to 16 characters", quoted(v))
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("invalid username %s: only printable ASCII without spaces", quoted(v))
		}
	}
	return nil
}

// canonicalUUID writes the lowercase dashed form of s into out, accepting
// the dashed and the 32-digit forms in any case, without allocating.
func canonicalUUID(s string, out *[36]byte) bool {
	switch len(s) {
	case 32:
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return false
		}
	default:
		return false
	}
	j := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if len(s) == 36 && (i == 8 || i == 13 || i == 18 || i == 23) {
			continue
		}
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			c += 'a' - 'A'
		default:
			return false
		}
		if j == 8 || j == 13 || j == 18 || j == 23 {
			out[j] = '-'
			j++
		}
		out[j] = c
		j++
	}
	return true
}

// cidrBan is a range ban with its parsed prefix, kept in a slice because
// operators ban few ranges and a linear scan of them is cheapest.
type cidrBan struct {
	prefix netip.Prefix
	ban    Ban
}

// Store is the concurrency-safe ban list; lookups take a read lock and never
// allocate, so they can run on every connection.
type Store struct {
	path string

	writeMu sync.Mutex // serialises Add/Remove including their disk write

	mu    sync.RWMutex
	ips   map[netip.Addr]Ban
	cidrs []cidrBan
	names map[string]Ban
	uuids map[string]Ban
}

// fileFormat is the on-disk document; the version lets a future format be
// detected instead of misread.
type fileFormat struct {
	Version int   `json:"version"`
	Bans    []Ban `json:"bans"`
}

// Open loads the ban list at path, dropping bans that expired while the
// proxy was down. A missing file is an empty list; an unreadable or corrupt
// file (null included) is an error so bans are never silently lifted. Temp
// files left beside it by an interrupted write are removed. An empty path
// keeps the list in memory only.
func Open(path string, now time.Time) (*Store, error) {
	s := &Store{
		path:  path,
		ips:   make(map[netip.Addr]Ban),
		names: make(map[string]Ban),
		uuids: make(map[string]Ban),
	}
	if path == "" {
		return s, nil
	}
	removeTempFiles(path)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ban list: %w", err)
	}
	bans, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("ban list %s is corrupt (%w); fix or restore it, or move it aside to start with no bans", path, err)
	}
	for i, b := range bans {
		nb, err := normalize(b)
		if err != nil {
			return nil, fmt.Errorf("ban list %s, entry %d: %w; fix or remove that entry", path, i+1, err)
		}
		if nb.expired(now) {
			continue
		}
		s.put(nb)
	}
	return s, nil
}

// decode reads the versioned document, and also a bare JSON array so a
// hand-written list works.
func decode(data []byte) ([]Ban, error) {
	trimmed := strings.TrimSpace(string(data))
	if trimmed == "null" {
		return nil, errors.New("it holds null, which this proxy never writes")
	}
	if strings.HasPrefix(trimmed, "[") {
		var bans []Ban
		err := json.Unmarshal(data, &bans)
		return bans, err
	}
	var f struct {
		Version int             `json:"version"`
		Bans    json.RawMessage `json:"bans"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("unsupported version %d (this build reads version 1)", f.Version)
	}
	if b := strings.TrimSpace(string(f.Bans)); b == "" || b == "null" {
		return nil, errors.New(`"bans" is missing or null; an empty list is []`)
	}
	var bans []Ban
	err := json.Unmarshal(f.Bans, &bans)
	return bans, err
}

// put inserts or replaces b; the caller holds mu for writing.
func (s *Store) put(b Ban) {
	switch b.Type {
	case TypeIP:
		p, _ := parseIPValue(b.Value) // already validated by normalize
		if p.IsSingleIP() {
			s.ips[p.Addr()] = b
			return
		}
		for i := range s.cidrs {
			if s.cidrs[i].prefix == p {
				s.cidrs[i].ban = b
				return
			}
		}
		s.cidrs = append(s.cidrs, cidrBan{prefix: p, ban: b})
	case TypeUsername:
		s.names[b.Value] = b
	case TypeUUID:
		s.uuids[b.Value] = b
	}
}

// get returns the ban stored for a normalised type and value; the caller
// holds mu.
func (s *Store) get(t Type, v string) (Ban, bool) {
	switch t {
	case TypeIP:
		p, _ := parseIPValue(v)
		if p.IsSingleIP() {
			b, ok := s.ips[p.Addr()]
			return b, ok
		}
		for _, c := range s.cidrs {
			if c.prefix == p {
				return c.ban, true
			}
		}
	case TypeUsername:
		b, ok := s.names[v]
		return b, ok
	case TypeUUID:
		b, ok := s.uuids[v]
		return b, ok
	}
	return Ban{}, false
}

// del removes a normalised type and value; the caller holds mu for writing.
func (s *Store) del(t Type, v string) {
	switch t {
	case TypeIP:
		p, _ := parseIPValue(v)
		if p.IsSingleIP() {
			delete(s.ips, p.Addr())
			return
		}
		s.cidrs = slices.DeleteFunc(s.cidrs, func(c cidrBan) bool { return c.prefix == p })
	case TypeUsername:
		delete(s.names, v)
	case TypeUUID:
		delete(s.uuids, v)
	}
}

// all returns every ban that applies at now, in a stable order (oldest
// first) so the file and the API list do not reshuffle; the caller holds mu.
func (s *Store) all(now time.Time) []Ban {
	out := make([]Ban, 0, len(s.ips)+len(s.cidrs)+len(s.names)+len(s.uuids))
	add := func(b Ban) {
		if !b.expired(now) {
			out = append(out, b)
		}
	}
	for _, b := range s.ips {
		add(b)
	}
	for _, c := range s.cidrs {
		add(c.ban)
	}
	for _, b := range s.names {
		add(b)
	}
	for _, b := range s.uuids {
		add(b)
	}
	slices.SortFunc(out, func(a, b Ban) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		if c := strings.Compare(string(a.Type), string(b.Type)); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
	return out
}

// Add validates and normalises b, replaces any ban with the same type and
// value, and returns once the list is on disk, so an acknowledged ban
// survives a crash. A zero CreatedAt becomes now.
func (s *Store) Add(b Ban, now time.Time) (Ban, error) {
	nb, err := normalize(b)
	if err != nil {
		return Ban{}, err
	}
	if nb.CreatedAt.IsZero() {
		nb.CreatedAt = now.UTC().Round(0)
	}
	if nb.expired(now) {
		return Ban{}, fmt.Errorf("ban on %s %q expires at %s, which is not in the future", nb.Type, nb.Value, nb.ExpiresAt.Format(time.RFC3339))
	}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.RLock()
	list := s.all(now)
	s.mu.RUnlock()
	list = slices.DeleteFunc(list, func(x Ban) bool { return x.Type == nb.Type && x.Value == nb.Value })
	list = append(list, nb)
	if err := s.persist(list); err != nil {
		return Ban{}, err
	}
	s.mu.Lock()
	s.put(nb)
	s.mu.Unlock()
	return nb, nil
}

// Remove lifts the ban of type t on value (in any accepted spelling) and
// returns it once the change is on disk; ErrNotFound if there is none or it
// already expired.
func (s *Store) Remove(t Type, value string, now time.Time) (Ban, error) {
	key, err := normalize(Ban{Type: t, Value: value})
	if err != nil {
		return Ban{}, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.RLock()
	old, ok := s.get(key.Type, key.Value)
	list := s.all(now)
	s.mu.RUnlock()
	if !ok || old.expired(now) {
		return Ban{}, fmt.Errorf("%s %q: %w", t, key.Value, ErrNotFound)
	}
	list = slices.DeleteFunc(list, func(x Ban) bool { return x.Type == key.Type && x.Value == key.Value })
	if err := s.persist(list); err != nil {
		return Ban{}, err
	}
	s.mu.Lock()
	s.del(key.Type, key.Value)
	s.mu.Unlock()
	return old, nil
}

// List returns the bans in force at now, oldest first, and forgets expired
// ones (the file catches up on the next write, and Open skips them anyway).
func (s *Store) List(now time.Time) []Ban {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, b := range s.ips {
		if b.expired(now) {
			delete(s.ips, k)
		}
	}
	s.cidrs = slices.DeleteFunc(s.cidrs, func(c cidrBan) bool { return c.ban.expired(now) })
	for k, b := range s.names {
		if b.expired(now) {
			delete(s.names, k)
		}
	}
	for k, b := range s.uuids {
		if b.expired(now) {
			delete(s.uuids, k)
		}
	}
	return s.all(now)
}

// CheckIP reports the ban covering ip at now, if any; it runs for every
// connection (status pings included) and does not allocate.
func (s *Store) CheckIP(ip netip.Addr, now time.Time) (Ban, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.checkIP(ip, now)
}

func (s *Store) checkIP(ip netip.Addr, now time.Time) (Ban, bool) {
	ip = ip.Unmap().WithZone("")
	if b, ok := s.ips[ip]; ok && !b.expired(now) {
		return b, true
	}
	for _, c := range s.cidrs {
		if c.prefix.Contains(ip) && !c.ban.expired(now) {
			return c.ban, true
		}
	}
	return Ban{}, false
}

// CheckPlayer reports the ban that stops a login by this player, checking
// UUID, then username, then address; uuid may be "" (offline mode or before
// the server sent it).
func (s *Store) CheckPlayer(ip netip.Addr, username, uuid string, now time.Time) (Ban, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var buf [36]byte
	if uuid != "" && canonicalUUID(uuid, &buf) {
		if b, ok := s.uuids[string(buf[:])]; ok && !b.expired(now) {
			return b, true
		}
	}
	if n := len(username); n > 0 && n <= len(buf) {
		for i := 0; i < n; i++ {
			c := username[i]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		if b, ok := s.names[string(buf[:n])]; ok && !b.expired(now) {
			return b, true
		}
	}
	return s.checkIP(ip, now)
}

// Len returns how many bans are stored (expired ones included until the next
// List), for metrics and startup logs.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ips) + len(s.cidrs) + len(s.names) + len(s.uuids)
}

// persist writes list atomically: temp file in the same directory, fsync,
// rename over the target, fsync the directory.
func (s *Store) persist(list []Ban) error {
	if s.path == "" {
		return nil
	}
	if list == nil {
		list = []Ban{} // Open refuses "bans": null
	}
	data, err := json.MarshalIndent(fileFormat{Version: 1, Bans: list}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode ban list: %w", err)
	}
	data = append(data, '\n')
	if err := atomicfile.Write(s.path, data); err != nil {
		return fmt.Errorf("save ban list: %w", err)
	}
	return nil
}

// tempPattern names the temp files of the versions before atomicfile.
func tempPattern(path string) string { return filepath.Base(path) + ".tmp-*" }

// removeTempFiles deletes what interrupted writes left beside path (the
// names of atomicfile, and those of the versions before it). Best effort: a
// file that cannot be removed is only clutter, never read.
func removeTempFiles(path string) {
	atomicfile.Clean(path)
	names, _ := filepath.Glob(filepath.Join(filepath.Dir(path), tempPattern(path)))
	for _, n := range names {
		_ = os.Remove(n)
	}
}

// CanonicalUUID is s as a lower-case dashed UUID (from the dashed or 32-digit
// form in any case); ok is false when s is not a UUID.
func CanonicalUUID(s string) (string, bool) {
	var buf [36]byte
	if !canonicalUUID(s, &buf) {
		return "", false
	}
	return string(buf[:]), true
}

// quoted is v for an error message, quoted and at most 40 characters: an
// error never repeats a long input back.
func quoted(v string) string {
	if r := []rune(v); len(r) > 40 {
		return strconv.Quote(string(r[:40])) + "…"
	}
	return strconv.Quote(v)
}

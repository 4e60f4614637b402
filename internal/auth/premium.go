package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultProfileAPI is Mojang's profile API, which says whether a name
// belongs to a paid account.
const DefaultProfileAPI = "https://api.mojang.com"

// ProfileLookupPath is where the profile API answers a name, below its base.
const ProfileLookupPath = "/users/profiles/minecraft/"

// PremiumLookup tells whether a name belongs to a paid Minecraft account,
// with the answers cached: a network asks once per name per TTL, however
// often its players reconnect (Mojang allows about 600 lookups in 10 min).
type PremiumLookup struct {
	base    string
	ttl     time.Duration
	timeout time.Duration
	hc      *http.Client
	now     func() time.Time

	mu    sync.Mutex
	cache map[string]premiumAnswer
}

type premiumAnswer struct {
	premium bool
	until   time.Time
}

// premiumCacheMax bounds the cache; a flood of made-up names empties it
// rather than growing it.
const premiumCacheMax = 100_000

// NewPremiumLookup asks base (DefaultProfileAPI when "") and keeps each
// answer for ttl.
func NewPremiumLookup(base string, ttl, timeout time.Duration, now func() time.Time) (*PremiumLookup, error) {
	if base == "" {
		base = DefaultProfileAPI
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("profile API %q needs an http:// or https:// URL, e.g. %s", base, DefaultProfileAPI)
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if now == nil {
		now = time.Now
	}
	return &PremiumLookup{base: strings.TrimSuffix(u.String(), "/"), ttl: ttl, timeout: timeout,
		hc: &http.Client{Transport: sessionTransport}, now: now, cache: map[string]premiumAnswer{}}, nil
}

// IsPremium reports whether name belongs to a paid account. An error means
// the API gave no answer (down, rate-limited): the caller decides what a
// name then counts as.
func (l *PremiumLookup) IsPremium(ctx context.Context, name string) (bool, error) {
	key := strings.ToLower(name)
	now := l.now()
	l.mu.Lock()
	a, ok := l.cache[key]
	l.mu.Unlock()
	if ok && now.Before(a.until) {
		return a.premium, nil
	}
	premium, err := l.ask(ctx, name)
	if err != nil {
		return false, err
	}
	l.mu.Lock()
	if len(l.cache) >= premiumCacheMax {
		clear(l.cache)
	}
	l.cache[key] = premiumAnswer{premium: premium, until: now.Add(l.ttl)}
	l.mu.Unlock()
	return premium, nil
}

func (l *PremiumLookup) ask(ctx context.Context, name string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.base+ProfileLookupPath+url.PathEscape(name), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("User-Agent", "infrarust")
	req.Header.Set("Accept", "application/json")
	resp, err := l.hc.Do(req)
	if err != nil {
		return false, fmt.Errorf("%w: profile lookup: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes))
	if err != nil {
		return false, fmt.Errorf("%w: profile lookup: %v", ErrUnavailable, err)
	}
	switch resp.StatusCode {
	case http.StatusNoContent, http.StatusNotFound:
		return false, nil
	case http.StatusOK:
		var p struct{ ID, Name string }
		if json.Unmarshal(body, &p) != nil || p.ID == "" {
			return false, fmt.Errorf("%w: profile lookup answered 200 without a profile", ErrUnavailable)
		}
		if _, err := ParseUUID(p.ID); err != nil {
			return false, fmt.Errorf("%w: profile lookup answered a bad UUID %q", ErrUnavailable, p.ID)
		}
		return strings.EqualFold(p.Name, name), nil
	}
	return false, fmt.Errorf("%w: profile lookup answered %s", ErrUnavailable, resp.Status)
}

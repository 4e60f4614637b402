package bans

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// durationUnits maps the humantime unit spellings operators type for bans
// to their length; days and weeks are what time.ParseDuration lacks.
var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "nsec": time.Nanosecond,
	"us": time.Microsecond, "µs": time.Microsecond, "usec": time.Microsecond,
	"ms": time.Millisecond, "msec": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
}

// ParseDuration reads a humantime duration such as "7d", "12h", "1w 2d" or
// "2m30s", so ban lengths can be typed the way operators say them. Each
// component is a whole number followed by a unit; components may be
// separated by spaces. The result must be positive.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("empty duration: want e.g. 30m, 12h, 7d or 1w 2d")
	}
	var total time.Duration
	rest := in
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("invalid duration %q: expected a number at %q (want e.g. 30m, 12h, 7d or 1w 2d)", s, rest)
		}
		var n int64
		for _, c := range rest[:i] {
			if n > (math.MaxInt64-9)/10 {
				return 0, fmt.Errorf("invalid duration %q: too large", s)
			}
			n = n*10 + int64(c-'0')
		}
		rest = strings.TrimLeft(rest[i:], " ")
		j := 0
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9') && rest[j] != ' ' {
			j++
		}
		if j == 0 {
			return 0, fmt.Errorf("invalid duration %q: missing unit after %d (use s, m, h, d or w)", s, n)
		}
		unit, ok := durationUnits[rest[:j]]
		if !ok {
			return 0, fmt.Errorf("invalid duration %q: unknown unit %q (use s, m, h, d or w)", s, rest[:j])
		}
		if n > int64(math.MaxInt64/unit) {
			return 0, fmt.Errorf("invalid duration %q: too large", s)
		}
		d := time.Duration(n) * unit
		if total > math.MaxInt64-d {
			return 0, fmt.Errorf("invalid duration %q: too large", s)
		}
		total += d
		rest = strings.TrimLeft(rest[j:], " ")
	}
	if total <= 0 {
		return 0, fmt.Errorf("invalid duration %q: must be longer than zero", s)
	}
	return total, nil
}

package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Duration accepts the humantime forms operators already write for the Rust
// Infrarust ("10s", "1m", "500ms", "2m30s", "1h 30m", "7d").
type Duration time.Duration

// D is a shorthand so callers do not sprinkle conversions everywhere.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String renders the duration in Go's compact form, which ParseDuration reads back.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalText lets go-toml decode quoted humantime strings.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalText keeps round trips (config init, tests) readable.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "us": time.Microsecond, "µs": time.Microsecond,
	"ms": time.Millisecond, "msec": time.Millisecond,
	"nsec": time.Nanosecond, "usec": time.Microsecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
}

// ParseDuration parses humantime: a sequence of <number><unit> terms such as "10s",
// "2m30s", "1h 30m", "1 week 3 days" or "1.5s"; spaces are allowed between terms and
// between a number and its unit. "0" is zero. Negative or overflowing values are refused.
// Upper-case "M" is refused on purpose: humantime reads it as months.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("empty duration; write it like \"10s\", \"1m\" or \"2m30s\"")
	}
	if in == "0" {
		return 0, nil
	}
	var total time.Duration
	rest := in
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("invalid duration %q: expected a number at %q (write it like \"10s\" or \"2m30s\")", in, rest)
		}
		num, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: %q is not a number", in, rest[:i])
		}
		rest = strings.TrimLeft(rest[i:], " ")
		j := 0
		for j < len(rest) && rest[j] != ' ' && rest[j] != '.' && !unicode.IsDigit(rune(rest[j])) {
			j++
		}
		unit, ok := durationUnits[rest[:j]]
		if !ok {
			if j == 0 {
				return 0, fmt.Errorf("invalid duration %q: missing unit after %v (use ms, s, m, h, d or w)", in, num)
			}
			return 0, fmt.Errorf("invalid duration %q: unknown unit %q (use ms, s, m, h, d or w)", in, rest[:j])
		}
		d := num * float64(unit)
		if d > float64(math.MaxInt64)-float64(total) {
			return 0, fmt.Errorf("invalid duration %q: too large", in)
		}
		total += time.Duration(d)
		rest = strings.TrimLeft(rest[j:], " ")
	}
	return total, nil
}

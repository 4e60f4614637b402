package config

import (
	"errors"
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

// durationUnitTable lists every unit ParseDuration reads, shortest name first; the
// error for a number without a unit is built from it, so the two cannot drift.
var durationUnitTable = []struct {
	names []string
	d     time.Duration
}{
	{[]string{"ns", "nsec"}, time.Nanosecond},
	{[]string{"us", "µs", "usec"}, time.Microsecond},
	{[]string{"ms", "msec"}, time.Millisecond},
	{[]string{"s", "sec", "secs", "second", "seconds"}, time.Second},
	{[]string{"m", "min", "mins", "minute", "minutes"}, time.Minute},
	{[]string{"h", "hr", "hrs", "hour", "hours"}, time.Hour},
	{[]string{"d", "day", "days"}, 24 * time.Hour},
	{[]string{"w", "week", "weeks"}, 7 * 24 * time.Hour},
}

var durationUnits = func() map[string]time.Duration {
	m := map[string]time.Duration{}
	for _, u := range durationUnitTable {
		for _, n := range u.names {
			m[n] = u.d
		}
	}
	return m
}()

// durationUnitList names every unit a duration may use, for error messages: each
// unit's short name, then a few of the long aliases.
var durationUnitList = func() string {
	var short []string
	for _, u := range durationUnitTable {
		short = append(short, u.names[0])
	}
	return strings.Join(short, ", ") + `; long forms such as "sec", "min", "hours", "days" work too`
}()

// unitlessHint is the error for a duration written as a bare number.
func unitlessHint(num string) string {
	return fmt.Sprintf("duration %s has no unit; write it with one, e.g. \"%ss\" or \"%sms\" (units: %s)", num, num, num, durationUnitList)
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
		numText := rest[:i]
		num, err := strconv.ParseFloat(numText, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: %q is not a number", in, numText)
		}
		rest = strings.TrimLeft(rest[i:], " ")
		j := 0
		for j < len(rest) && rest[j] != ' ' && rest[j] != '.' && !unicode.IsDigit(rune(rest[j])) {
			j++
		}
		unit, ok := durationUnits[rest[:j]]
		if !ok {
			if j == 0 && in == numText {
				return 0, errors.New(unitlessHint(numText))
			}
			if j == 0 {
				return 0, fmt.Errorf("invalid duration %q: %s has no unit (units: %s)", in, numText, durationUnitList)
			}
			return 0, fmt.Errorf("invalid duration %q: unknown unit %q (units: %s)", in, rest[:j], durationUnitList)
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

// ParseBanLength reads a ban length such as "7d", "12h", "1w 2d" or "2m30s" with the
// same humantime parser as a duration of the configuration; a ban takes whole numbers only and
// must be longer than zero.
func ParseBanLength(s string) (time.Duration, error) {
	if strings.Contains(s, ".") {
		return 0, fmt.Errorf("invalid duration %q: use whole numbers (e.g. 90m rather than 1.5h)", s)
	}
	d, err := ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("invalid duration %q: must be longer than zero", s)
	}
	return d, nil
}

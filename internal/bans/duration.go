package bans

import (
	"fmt"
	"strings"
	"time"

	"github.com/infrarust-go/infrarust/internal/config"
)

// ParseDuration reads a ban length such as "7d", "12h", "1w 2d" or "2m30s" with the
// same humantime parser as the configuration; a ban takes whole numbers only and
// must be longer than zero.
func ParseDuration(s string) (time.Duration, error) {
	if strings.Contains(s, ".") {
		return 0, fmt.Errorf("invalid duration %q: use whole numbers (e.g. 90m rather than 1.5h)", s)
	}
	d, err := config.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("invalid duration %q: must be longer than zero", s)
	}
	return d, nil
}

package config

import (
	"testing"
	"time"
)

func TestParseBanLength(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"7d", 7 * day, false},
		{"12h", 12 * time.Hour, false},
		{"30m", 30 * time.Minute, false},
		{"1w 2d", 9 * day, false},
		{"1w2d", 9 * day, false},
		{"2m30s", 150 * time.Second, false},
		{" 1 week 3 days ", 10 * day, false},
		{"500ms", 500 * time.Millisecond, false},
		{"2hours 5min", 2*time.Hour + 5*time.Minute, false},
		{"", 0, true},
		{"10", 0, true},
		{"d", 0, true},
		{"-5m", 0, true},
		{"1.5h", 0, true},
		{"3 fortnights", 0, true},
		{"1M", 0, true}, // humantime's month, deliberately not minutes
		{"0s", 0, true},
		{"99999999999999999999s", 0, true},
		{"20000w", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseBanLength(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseBanLength(%q) = (%v, %v), want (%v, err=%v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

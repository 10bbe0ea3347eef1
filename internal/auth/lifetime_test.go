package auth_test

import (
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/internal/auth"
	"github.com/madebook/madebook/internal/errs"
)

func TestParseLifetime(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"90d", 90 * day},
		{"1d", day},
		{"1d12h", day + 12*time.Hour},
		{"2d30m", 2*day + 30*time.Minute},
		{"12h", 12 * time.Hour},
		{"90m", 90 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"1m", time.Minute},
		{"60s", time.Minute},
		{" 7d ", 7 * day},
		{"36500d", auth.MaxLifetime},
	} {
		t.Run(tt.in+" is "+tt.want.String(), func(t *testing.T) {
			got, err := auth.ParseLifetime(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("ParseLifetime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		in, says string
	}{
		{"", "not a lifetime"},
		{"soon", "not a lifetime"},
		{"90", "not a lifetime"},
		{"d", "not a lifetime"},
		{"1.5d", "not a lifetime"},
		{"-1d", "not a lifetime"},
		{"-5m", "not a lifetime"},
		{"1d-5h", "not a lifetime"},
		{"1d1d", "not a lifetime"},
		{"90D", "not a lifetime"},
		{"30s", "too short"},
		{"59s", "too short"},
		{"0d", "too short"},
		{"0", "too short"},
		{"36501d", "too long"},
		{"99999999999999999999d", "too long"},
		{"2562047h", "too long"},
	} {
		t.Run(tt.in+" is refused as "+tt.says, func(t *testing.T) {
			got, err := auth.ParseLifetime(tt.in)
			if errs.KindOf(err) != errs.Invalid || errs.CodeOf(err) != "invalid_expiry" || got != 0 {
				t.Fatalf("ParseLifetime(%q) = %v, %v; want an invalid_expiry error", tt.in, got, err)
			}
			if !strings.Contains(err.Error(), tt.says) || !strings.Contains(err.Error(), "1m") && tt.says != "too long" {
				t.Errorf("the message %q does not say %q and what to give", err, tt.says)
			}
		})
	}
}

func TestFormatLifetimeIsReadBack(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		90 * 24 * time.Hour:              "90d",
		36*time.Hour + 30*time.Minute:    "1d12h30m",
		12 * time.Hour:                   "12h",
		time.Minute:                      "1m",
		24*time.Hour + 90*time.Second:    "1d1m30s",
		auth.MaxLifetime:                 "36500d",
		2*24*time.Hour + time.Nanosecond: "2d1ns",
	} {
		got := auth.FormatLifetime(d)
		if got != want {
			t.Errorf("FormatLifetime(%v) = %q, want %q", d, got, want)
		}
		if d%time.Second != 0 {
			continue
		}
		if back, err := auth.ParseLifetime(got); err != nil || back != d {
			t.Errorf("ParseLifetime(%q) = %v, %v; want %v back", got, back, err, d)
		}
	}
}

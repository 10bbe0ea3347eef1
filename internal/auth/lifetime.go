package auth

import (
	"strconv"
	"strings"
	"time"

	"github.com/madebook/madebook/internal/errs"
	"github.com/madebook/madebook/internal/protocol"
)

// Limits of a credential's lifetime (--expires, MADEBOOK_TOKEN_MAX_AGE).
const (
	// MinLifetime is the shortest lifetime a credential may be given.
	MinLifetime = time.Minute
	// MaxLifetime is the longest: a hundred years, far short of what a
	// time.Duration holds.
	MaxLifetime = 36500 * 24 * time.Hour
)

// ParseLifetime reads a credential's lifetime: a Go duration ("90m",
// "12h", "1h30m"), a number of days ("90d"), or days followed by a Go
// duration ("1d12h"). It must be at least MinLifetime and at most
// MaxLifetime. Errors: invalid_expiry, whose message names what was
// given and what to give instead.
func ParseLifetime(s string) (time.Duration, error) {
	v := strings.TrimSpace(s)
	d, ok := parseDays(v)
	if !ok {
		return 0, errs.E(errs.Invalid, "invalid_expiry",
			"%q is not a lifetime: give a duration such as 90d, 12h or 30m (d is days; at least 1m).", s)
	}
	if d < MinLifetime {
		return 0, errs.E(errs.Invalid, "invalid_expiry", "%q is too short: a credential lives at least 1m.", s)
	}
	if d > MaxLifetime {
		return 0, errs.E(errs.Invalid, "invalid_expiry", "%q is too long: a credential lives at most 36500d (100 years).", s)
	}
	return d, nil
}

// parseDays reads "Nd", "NdGO" or "GO" (GO a Go duration, N digits), or
// reports false. A sign, a fraction of a day and an empty string are not
// lifetimes; a count of days too large to hold is read as just over
// MaxLifetime, so that the caller refuses it as too long.
func parseDays(v string) (time.Duration, bool) {
	days, rest, hasDays := strings.Cut(v, "d")
	if !hasDays {
		days, rest = "", v
	}
	var d time.Duration
	if hasDays {
		if days == "" || strings.Trim(days, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n > int64(MaxLifetime/(24*time.Hour)) {
			return MaxLifetime + 1, true // digits, too many days to hold
		}
		d = time.Duration(n) * 24 * time.Hour
	}
	if rest == "" {
		return d, hasDays
	}
	if rest[0] == '-' || rest[0] == '+' {
		return 0, false
	}
	r, err := time.ParseDuration(rest)
	if err != nil {
		return 0, false
	}
	if r > MaxLifetime {
		return MaxLifetime + 1, true
	}
	return d + r, true
}

// FormatLifetime writes a lifetime as ParseLifetime reads it, in days
// when it is a whole number of them ("90d"), else with the rest as a Go
// duration without its zero units ("1d12h30m", "12h", "2m").
func FormatLifetime(d time.Duration) string {
	const day = 24 * time.Hour
	days := ""
	if d > day || d > 0 && d%day == 0 {
		days, d = strconv.FormatInt(int64(d/day), 10)+"d", d%day
	}
	switch {
	case d == 0 && days != "":
		return days
	case d%time.Second != 0:
		return days + d.String()
	}
	return days + protocol.FormatDuration(d)
}

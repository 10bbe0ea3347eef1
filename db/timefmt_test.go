package db_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/madebook/madebook/db"
)

var base = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestFormatTimeRoundTrips(t *testing.T) {
	plus2 := time.FixedZone("UTC+2", 2*60*60)
	tests := []struct {
		name string
		in   time.Time
		text string
		back time.Time // what ParseTime returns
	}{
		{"a whole second keeps a fraction of zeros", base, "2026-11-29T12:00:00.000000Z", base},
		{"half a second", base.Add(500 * time.Millisecond), "2026-11-29T12:00:00.500000Z", base.Add(500 * time.Millisecond)},
		{"a twentieth of a second", base.Add(50 * time.Millisecond), "2026-11-29T12:00:00.050000Z", base.Add(50 * time.Millisecond)},
		{"one microsecond", base.Add(time.Microsecond), "2026-11-29T12:00:00.000001Z", base.Add(time.Microsecond)},
		{"every digit of the fraction", base.Add(123456 * time.Microsecond), "2026-11-29T12:00:00.123456Z", base.Add(123456 * time.Microsecond)},
		{"a time in another zone is stored as UTC", time.Date(2026, 11, 29, 14, 0, 0, 250_000_000, plus2), "2026-11-29T12:00:00.250000Z", base.Add(250 * time.Millisecond)},
		{"nanoseconds are cut to microseconds", base.Add(999 * time.Nanosecond), "2026-11-29T12:00:00.000000Z", base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := db.FormatTime(tt.in)
			if text != tt.text {
				t.Fatalf("FormatTime = %q, want %q", text, tt.text)
			}
			back, err := db.ParseTime(text)
			if err != nil {
				t.Fatal(err)
			}
			if !back.Equal(tt.back) || back.Location() != time.UTC {
				t.Fatalf("ParseTime(%q) = %s, want %s in UTC", text, back, tt.back)
			}
			if !back.Equal(tt.in.Truncate(time.Microsecond)) {
				t.Fatalf("the round trip moved %s to %s", tt.in, back)
			}
			if n := db.NullTime(tt.in); !n.Valid || n.String != text {
				t.Fatalf("NullTime = %+v", n)
			}
		})
	}
}

func TestStoredTimesSortAsText(t *testing.T) {
	// Times whose fractions have different lengths once trailing zeros are
	// dropped: RFC 3339 with a variable fraction sorts "12:00:00Z" after
	// "12:00:00.5Z", because 'Z' > '.'.
	times := []time.Time{
		base.Add(-time.Microsecond),
		base,
		base.Add(time.Microsecond),
		base.Add(10 * time.Microsecond),
		base.Add(50 * time.Millisecond),
		base.Add(123456 * time.Microsecond),
		base.Add(500 * time.Millisecond),
		base.Add(time.Second),
		base.Add(time.Second + 100*time.Millisecond),
		base.Add(10 * time.Second),
		base.Add(time.Hour),
		base.Add(24 * time.Hour),
		time.Date(2026, 11, 29, 13, 30, 0, 5_000_000, time.FixedZone("UTC+2", 2*60*60)), // 11:30:00.005Z
		time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	sign := func(n int) int {
		switch {
		case n < 0:
			return -1
		case n > 0:
			return 1
		}
		return 0
	}
	for _, a := range times {
		for _, b := range times {
			fa, fb := db.FormatTime(a), db.FormatTime(b)
			if sign(strings.Compare(fa, fb)) != sign(a.Compare(b)) {
				t.Errorf("%s vs %s: text order %d, time order %d", fa, fb, strings.Compare(fa, fb), a.Compare(b))
			}
		}
	}
	t.Run("sorting the text sorts the times", func(t *testing.T) {
		texts := make([]string, len(times))
		for i, tm := range times {
			texts[i] = db.FormatTime(tm)
		}
		slices.Sort(texts)
		sorted := slices.Clone(times)
		slices.SortFunc(sorted, func(a, b time.Time) int { return a.Compare(b) })
		for i := range sorted {
			if texts[i] != db.FormatTime(sorted[i]) {
				t.Fatalf("position %d: text sort gives %s, time sort gives %s", i, texts[i], db.FormatTime(sorted[i]))
			}
		}
	})
}

func TestParseTime(t *testing.T) {
	t.Run("the empty string is the zero time", func(t *testing.T) {
		got, err := db.ParseTime("")
		if err != nil || !got.IsZero() {
			t.Fatalf("ParseTime(\"\") = %s, %v", got, err)
		}
	})
	t.Run("a malformed time is an error", func(t *testing.T) {
		for _, s := range []string{"yesterday", "2026-11-29 12:00:00", "2026-13-01T00:00:00Z"} {
			if _, err := db.ParseTime(s); err == nil {
				t.Errorf("ParseTime(%q) succeeded", s)
			}
		}
	})
	t.Run("the zero time is NULL", func(t *testing.T) {
		if n := db.NullTime(time.Time{}); n.Valid {
			t.Fatalf("NullTime(zero) = %+v, want NULL", n)
		}
	})
}

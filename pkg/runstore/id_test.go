package runstore

import (
	"slices"
	"testing"
	"time"
)

func TestIDsIncreaseWhateverTheClock(t *testing.T) {
	base := time.Date(2026, 5, 17, 9, 30, 0, 0, time.UTC)
	// A clock that stands still, then goes back an hour, then ahead.
	times := []time.Time{base, base, base, base.Add(-time.Hour), base.Add(-time.Hour), base.Add(time.Nanosecond), base.Add(time.Minute)}
	i := 0
	clock := func() time.Time { t := times[min(i, len(times)-1)]; i++; return t }
	dir := t.TempDir()
	s := openTest(t, dir, WithClock(clock))
	var got []string
	for range times {
		got = append(got, mustCreate(t, s, `{}`).ID)
	}
	s.Close()
	// Ids keep increasing across a reopen with the clock still behind.
	i = 3
	s = openTest(t, dir, WithClock(clock))
	got = append(got, mustCreate(t, s, `{}`).ID)
	if !slices.IsSorted(got) {
		t.Errorf("ids not increasing: %v", got)
	}
	if len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("repeated id: %v", got)
	}
	for _, id := range got {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false for an id the store made", id)
		}
	}
}

func TestValidID(t *testing.T) {
	for _, c := range []struct {
		id string
		ok bool
	}{
		{"20260517T093012.123456Z-9f3a1c2e", true},
		{"20260517T093012.123456Z-9F3A1C2E", false},
		{"20260517T093012.123456Z-9f3a1c2", false},
		{"20260517T093012.123456Z_9f3a1c2e", false},
		{"20261317T093012.123456Z-9f3a1c2e", false},
		{"../../../../../../../etc/passwd", false},
		{"", false},
	} {
		if got := ValidID(c.id); got != c.ok {
			t.Errorf("ValidID(%q) = %v, want %v", c.id, got, c.ok)
		}
	}
}

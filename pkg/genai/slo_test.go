package genai

import (
	"errors"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	s, err := ParseSLO("ttft=500ms, TPOT=50ms,e2e=10s")
	if err != nil || s != (SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond, E2E: 10 * time.Second}) {
		t.Fatalf("ParseSLO = %+v, %v", s, err)
	}
	if s, err := ParseSLO("tpot=40ms"); err != nil || s != (SLO{TPOT: 40 * time.Millisecond}) {
		t.Errorf("a subset: %+v, %v", s, err)
	}
	for _, bad := range []string{"", "ttft", "ttft=fast", "ttft=-1s", "ttl=1s", "ttft=1s,ttft=2s"} {
		if _, err := ParseSLO(bad); !errors.Is(err, ErrSLO) {
			t.Errorf("ParseSLO(%q) = %v, want ErrSLO", bad, err)
		}
	}
}

func TestSLOMet(t *testing.T) {
	s := SLO{TTFT: 100 * time.Millisecond, TPOT: 10 * time.Millisecond}
	ms := time.Millisecond
	cases := []struct {
		ttft, tpot, e2e time.Duration
		tokens          int
		want            bool
	}{
		{100 * ms, 10 * ms, time.Hour, 5, true},
		{101 * ms, 1 * ms, 0, 5, false},
		{1 * ms, 11 * ms, 0, 5, false},
		{1 * ms, 11 * ms, 0, 1, true}, // one token has no TPOT
	}
	for _, c := range cases {
		if got := s.Met(c.ttft, c.tpot, c.e2e, c.tokens); got != c.want {
			t.Errorf("Met(%v, %v, %v, %d) = %v, want %v", c.ttft, c.tpot, c.e2e, c.tokens, got, c.want)
		}
	}
	if (SLO{}).Set() || !s.Set() {
		t.Error("Set")
	}
}

// String gives back what ParseSLO reads: --slo's own syntax.
func TestSLOString(t *testing.T) {
	for _, v := range []string{"ttft=500ms,tpot=50ms,e2e=10s", "tpot=40ms", "ttft=2s,e2e=1m0s"} {
		s, err := ParseSLO(v)
		if err != nil || s.String() != v {
			t.Errorf("ParseSLO(%q).String() = %q, %v", v, s.String(), err)
		}
	}
	if (SLO{}).String() != "" {
		t.Errorf("an empty SLO prints %q", SLO{}.String())
	}
}

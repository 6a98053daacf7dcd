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

// A bound may name its percentile; latency is a bound of its own; the
// old spellings still read as before.
func TestParseSLOPercentiles(t *testing.T) {
	ms := time.Millisecond
	s, err := ParseSLO("ttft=500ms@p90, latency=20ms@P99.9,e2e=2s")
	want := SLO{TTFT: 500 * ms, TTFTPercentile: 0.9, Latency: 20 * ms, LatencyPercentile: 0.999, E2E: 2 * time.Second}
	if err != nil || s != want {
		t.Fatalf("ParseSLO = %+v, %v; want %+v", s, err, want)
	}
	b := s.Bounds()
	if len(b) != 3 || b[0].Name != "ttft" || b[0].Percentile != 0.9 || !b[0].Given ||
		b[1].Name != "e2e" || b[1].Percentile != DefaultSLOPercentile || b[1].Given ||
		b[2].Name != "latency" || b[2].Bound != 20*ms || b[2].Percentile != 0.999 {
		t.Errorf("Bounds = %+v", b)
	}
	for _, v := range []string{"ttft=500ms@p90,latency=20ms@p99.9", "latency=1s", "tpot=50ms@p50,e2e=10s@p99.99"} {
		s, err := ParseSLO(v)
		if err != nil || s.String() != v {
			t.Errorf("ParseSLO(%q).String() = %q, %v", v, s.String(), err)
		}
	}
	for _, bad := range []string{"latency=1s@", "latency=1s@99", "latency=1s@p0", "latency=1s@p100", "latency=1s@pfast",
		"latency=1s@p-5", "latency=@p90", "latency=1s,latency=2s", "ttft=1s@p90@p99"} {
		if _, err := ParseSLO(bad); !errors.Is(err, ErrSLO) {
			t.Errorf("ParseSLO(%q) = %v, want ErrSLO", bad, err)
		}
	}
}

// Per sample, the latency bound judges the sample's latency as e2e does.
func TestSLOMetLatency(t *testing.T) {
	s := SLO{Latency: 20 * time.Millisecond}
	if !s.Set() || !s.Met(0, 0, 20*time.Millisecond, 0) || s.Met(0, 0, 21*time.Millisecond, 0) {
		t.Errorf("latency bound: Set %v, Met(20ms) %v, Met(21ms) %v", s.Set(), s.Met(0, 0, 20*time.Millisecond, 0), s.Met(0, 0, 21*time.Millisecond, 0))
	}
}

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"ttft=500ms", "ttft=500ms@p90,latency=20ms@p99.9", "e2e=1s@P50,tpot=3ms", "latency=1s@p", "x=1s", "ttft=1s@p1e-9", "latency=1h@p99.99999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			if !errors.Is(err, ErrSLO) {
				t.Fatalf("ParseSLO(%q): %v does not wrap ErrSLO", s, err)
			}
			return
		}
		for _, b := range slo.Bounds() {
			if b.Bound <= 0 || !(b.Percentile > 0 && b.Percentile < 1) {
				t.Fatalf("ParseSLO(%q): bound %+v", s, b)
			}
		}
		if back, err := ParseSLO(slo.String()); err != nil || back != slo {
			t.Fatalf("ParseSLO(%q) = %+v; its String %q parses to %+v, %v", s, slo, slo.String(), back, err)
		}
	})
}

package genai

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DefaultSLOPercentile is the percentile a bound of --slo is judged at when
// it names none (a shaped run's verdict): MLPerf's Server scenarios judge
// their latency, TTFT and TPOT bounds at the 99th percentile for nearly
// every model (the LLM tasks included), so an SLO written as LoadGen's
// bounds are reads the same.
const DefaultSLOPercentile = 0.99

// SLO is a user's service-level objectives (`--slo
// ttft=500ms@p90,tpot=50ms,e2e=10s,latency=20ms@p99.9`, the spec's `slo`).
// Each bound set does two jobs. Per sample, a sample meets the SLO when
// each bound holds for it (Met): goodput is the rate of those samples.
// Over a run, a run that is no LoadGen scenario (a load shape: stages, a
// trace, a mix) is judged by its bounds, each at its percentile (the
// default DefaultSLOPercentile) over the run's samples. Zero: not set.
// Latency is the sample's latency from its scheduled time, as E2E is: a
// generative run may name either; a run of tensor inference has only it.
type SLO struct {
	TTFT    time.Duration `json:"ttft_ns,omitempty"`
	TPOT    time.Duration `json:"tpot_ns,omitempty"`
	E2E     time.Duration `json:"e2e_ns,omitempty"`
	Latency time.Duration `json:"latency_ns,omitempty"`
	// The percentile each bound is judged at in a run's verdict, a
	// fraction (0.9 for @p90); 0: not given, DefaultSLOPercentile.
	TTFTPercentile    float64 `json:"ttft_percentile,omitempty"`
	TPOTPercentile    float64 `json:"tpot_percentile,omitempty"`
	E2EPercentile     float64 `json:"e2e_percentile,omitempty"`
	LatencyPercentile float64 `json:"latency_percentile,omitempty"`
}

// SLOBound is one bound of an SLO: its name as --slo writes it, the bound
// and the percentile it is judged at (the default filled in).
type SLOBound struct {
	Name       string
	Bound      time.Duration
	Percentile float64
	// Given: the percentile was written (@pNN), not the default.
	Given bool
}

// Bounds lists the bounds that are set, in --slo's order: ttft, tpot,
// e2e, latency.
func (s SLO) Bounds() []SLOBound {
	var out []SLOBound
	for _, b := range []struct {
		name string
		d    time.Duration
		p    float64
	}{{"ttft", s.TTFT, s.TTFTPercentile}, {"tpot", s.TPOT, s.TPOTPercentile}, {"e2e", s.E2E, s.E2EPercentile}, {"latency", s.Latency, s.LatencyPercentile}} {
		if b.d <= 0 {
			continue
		}
		sb := SLOBound{Name: b.name, Bound: b.d, Percentile: b.p, Given: b.p > 0}
		if !sb.Given {
			sb.Percentile = DefaultSLOPercentile
		}
		out = append(out, sb)
	}
	return out
}

// String is the SLO as --slo takes it: "ttft=2s@p90,tpot=200ms" (the
// bounds that are set, in that order; a percentile only where given).
func (s SLO) String() string {
	var parts []string
	for _, b := range s.Bounds() {
		p := b.Name + "=" + b.Bound.String()
		if b.Given {
			p += "@" + PercentileName(b.Percentile)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ",")
}

// PercentileName writes a fraction as --slo does: 0.999 → "p99.9".
func PercentileName(p float64) string {
	return "p" + strconv.FormatFloat(math.Round(p*100*1e6)/1e6, 'f', -1, 64)
}

// Set says whether any bound is set.
func (s SLO) Set() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2E > 0 || s.Latency > 0 }

// Met says whether a sample with these measurements meets every bound set.
// tpot is ignored for a sample of fewer than two tokens (it has none); e2e
// is the sample's latency, which both E2E and Latency bound.
func (s SLO) Met(ttft, tpot, e2e time.Duration, tokens int) bool {
	return (s.TTFT == 0 || ttft <= s.TTFT) &&
		(s.TPOT == 0 || tokens < 2 || tpot <= s.TPOT) &&
		(s.E2E == 0 || e2e <= s.E2E) &&
		(s.Latency == 0 || e2e <= s.Latency)
}

// ErrSLO is a malformed --slo.
var ErrSLO = errors.New("slo")

// sloSyntax is what an --slo error says to write.
const sloSyntax = "want NAME=DURATION[@pPERCENTILE] with NAME ttft, tpot, e2e or latency, e.g. ttft=500ms@p90,latency=20ms"

// ParseSLO reads "ttft=500ms,tpot=50ms@p90,e2e=10s,latency=20ms@p99.9" (any
// subset, any order, Go durations; @pNN the percentile a run's verdict
// judges the bound at, 0 < NN < 100).
func ParseSLO(v string) (SLO, error) {
	var s SLO
	if strings.TrimSpace(v) == "" {
		return s, fmt.Errorf("%w: empty: %s", ErrSLO, sloSyntax)
	}
	for _, part := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return SLO{}, fmt.Errorf("%w: %q: %s", ErrSLO, part, sloSyntax)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		dst, pct := s.fields(name)
		if dst == nil {
			return SLO{}, fmt.Errorf("%w: %q is not ttft, tpot, e2e or latency", ErrSLO, name)
		}
		if *dst != 0 {
			return SLO{}, fmt.Errorf("%w: %s given twice", ErrSLO, name)
		}
		d, p, err := parseBound(name, val)
		if err != nil {
			return SLO{}, err
		}
		*dst, *pct = d, p
	}
	return s, nil
}

// fields are the bound and percentile fields of the bound named name; nil
// for no such bound.
func (s *SLO) fields(name string) (*time.Duration, *float64) {
	switch name {
	case "ttft":
		return &s.TTFT, &s.TTFTPercentile
	case "tpot":
		return &s.TPOT, &s.TPOTPercentile
	case "e2e":
		return &s.E2E, &s.E2EPercentile
	case "latency":
		return &s.Latency, &s.LatencyPercentile
	}
	return nil, nil
}

// parseBound reads one bound's value: DURATION or DURATION@pNN.
func parseBound(name, val string) (time.Duration, float64, error) {
	dur, pct, hasPct := strings.Cut(strings.TrimSpace(val), "@")
	d, err := time.ParseDuration(strings.TrimSpace(dur))
	if err != nil || d <= 0 {
		return 0, 0, fmt.Errorf("%w: %s=%q: want a positive duration such as 500ms or 2s", ErrSLO, name, dur)
	}
	if !hasPct {
		return d, 0, nil
	}
	num, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(pct)), "p")
	f, err := strconv.ParseFloat(num, 64)
	// Rounded to the 6 decimals of a percent String writes, so that p99.9
	// is 0.999 exactly, as LoadGen's percentiles are written (not
	// 0.9990000000000001), and a percentile reads back as written.
	p := math.Round(f*1e6) / 1e8
	if !ok || err != nil || !(p > 0 && p < 1) {
		return 0, 0, fmt.Errorf("%w: %s=%s: the percentile %q: want p followed by a number above 0 and below 100, e.g. @p90 or @p99.9", ErrSLO, name, val, pct)
	}
	return d, p, nil
}

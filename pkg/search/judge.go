package search

import (
	"fmt"
	"math"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// More ways a search judges its trials (Result.JudgedBy).
const (
	// JudgedByTokenLatency: a run with use_token_latencies is judged as
	// LoadGen judges it, by the TTFT and TPOT percentiles against their
	// bounds in place of the latency constraint (loadgen6: those with no
	// failed samples; v0.5: a VALID run, which they are part of).
	JudgedByTokenLatency = "token_latency_constraint"
	// JudgedByGoodput: a trial passes when at least Options.GoodputPercent
	// of the samples it issued met the user SLO (engine.slo), whatever the
	// ruleset.
	JudgedByGoodput = "goodput"
)

// Judge decides whether a trial passes: the search's criterion.
type Judge struct {
	// By is one of the JudgedBy constants.
	By string
	// GoodputPercent and SLO are a goodput search's (By JudgedByGoodput).
	GoodputPercent float64
	SLO            genai.SLO
}

// JudgeFor is the criterion of a search over s with o: goodput when o asks
// for it, the token-latency constraint when s uses token latencies (Server
// is the only scenario a peak search and token latencies share), else the
// ruleset's (JudgedBy).
func JudgeFor(s loadgen.Settings, o Options) (Judge, error) {
	g := o.GoodputPercent
	switch {
	case g != 0:
		if !(g > 0 && g <= 100) || math.IsNaN(g) {
			return Judge{}, fmt.Errorf("%w: goodput percent must be in (0, 100], got %v", ErrConfig, g)
		}
		if !s.Engine.SLO.Set() {
			return Judge{}, fmt.Errorf("%w: a goodput search counts the samples meeting the SLO: give one (--slo ttft=…,tpot=…, engine.slo)", ErrConfig)
		}
		return Judge{By: JudgedByGoodput, GoodputPercent: g, SLO: s.Engine.SLO}, nil
	case s.UseTokenLatencies && s.Scenario == trace.Server:
		return Judge{By: JudgedByTokenLatency}, nil
	}
	return Judge{By: JudgedBy(string(s.Ruleset))}, nil
}

// Passes is j's verdict on r. Token latencies: LoadGen's run already has
// them as its latency constraint (PerfConstraintsMet), so v0.5 takes a
// VALID run and loadgen6 the constraint with no failed samples, as without
// them. Goodput: samples meeting the SLO over samples issued (a failed or
// unanswered sample meets none).
func (j Judge) Passes(r *loadgen.Result) bool {
	if j.By == JudgedByGoodput {
		met, issued := goodputOf(r)
		return issued > 0 && 100*float64(met) >= j.GoodputPercent*float64(issued)
	}
	return Passes(r)
}

// goodputOf is r's samples meeting its SLO and samples issued.
func goodputOf(r *loadgen.Result) (met, issued int64) {
	if r.Tokens != nil && r.Tokens.SamplesMeetingSLO != nil {
		met = *r.Tokens.SamplesMeetingSLO
	}
	return met, r.SamplesIssued
}

// TokenFigures are a token-latency trial's TTFT and TPOT at the
// percentile in ms (FailedPercentile, -1: the percentile is a failed
// sample) against their bounds, each met or not (search.json's
// token_latencies; the run's result.json has them in ns).
type TokenFigures struct {
	TTFTMs      float64 `json:"ttft_ms"`
	TTFTBoundMs float64 `json:"ttft_bound_ms"`
	TTFTMet     bool    `json:"ttft_met"`
	TPOTMs      float64 `json:"tpot_ms"`
	TPOTBoundMs float64 `json:"tpot_bound_ms"`
	TPOTMet     bool    `json:"tpot_met"`
	// TTFTAnsweredMs and TPOTAnsweredMs are TTFT and TPOT at the
	// percentile over the answered samples only (absent when none was
	// answered, and from older records): TTFTMs and TPOTMs are -1 when
	// the percentile lands on a failed sample.
	TTFTAnsweredMs *float64 `json:"ttft_answered_ms,omitempty"`
	TPOTAnsweredMs *float64 `json:"tpot_answered_ms,omitempty"`
}

// answeredAtMs is an answered table's latency at p in ms, nil without one.
func answeredAtMs(s *loadgen.LatencyStats, p float64) *float64 {
	if s == nil {
		return nil
	}
	at, ok := s.At(p)
	if !ok {
		return nil
	}
	v := float64(at) / 1e6
	return &v
}

// GoodputFigures are a goodput trial's samples meeting the SLO among those
// issued (search.json's goodput).
type GoodputFigures struct {
	SamplesIssued     int64   `json:"samples_issued"`
	SamplesMeetingSLO int64   `json:"samples_meeting_slo"`
	Percent           float64 `json:"percent"`
}

// tokenConstraintMet is a Server run's token-latency constraint, both
// percentiles within their bounds (ok false without token latencies:
// Offline's have no constraint). Early stopping is the trial's own
// criterion.
func tokenConstraintMet(r *loadgen.Result) (met, ok bool) {
	t := r.TokenLatencies
	if t == nil || r.Scenario != trace.Server.String() {
		return false, false
	}
	return t.TTFTMet && t.TPOTMet, true
}

// figures fills tr's token-latency and goodput records from r.
func figures(tr *TrialResult, r *loadgen.Result) {
	if _, ok := tokenConstraintMet(r); ok {
		tl := r.TokenLatencies
		ms := func(ns int64) float64 {
			if ns == int64(stats.FailedLatency) {
				return FailedPercentile
			}
			return float64(ns) / 1e6
		}
		tr.Tokens = &TokenFigures{TTFTMs: ms(tl.TTFTAtPercentileNs), TTFTBoundMs: ms(clampNs(tl.TTFTBoundNs)), TTFTMet: tl.TTFTMet,
			TPOTMs: ms(tl.TPOTAtPercentileNs), TPOTBoundMs: ms(clampNs(tl.TPOTBoundNs)), TPOTMet: tl.TPOTMet,
			TTFTAnsweredMs: answeredAtMs(tl.TTFTAnswered, tl.Percentile), TPOTAnsweredMs: answeredAtMs(tl.TPOTAnswered, tl.Percentile)}
		if tr.Percentile == 0 {
			tr.Percentile = tl.Percentile
		}
	}
	if r.Tokens != nil && r.Tokens.SamplesMeetingSLO != nil {
		met, issued := goodputOf(r)
		g := &GoodputFigures{SamplesIssued: issued, SamplesMeetingSLO: met}
		if issued > 0 {
			g.Percent = 100 * float64(met) / float64(issued)
		}
		tr.Goodput = g
	}
}

func clampNs(ns uint64) int64 { return int64(min(ns, math.MaxInt64)) }

// tokenBoundText is "p99 TTFT ≤ 2000 ms and TPOT ≤ 200 ms" from res's
// trials, or "" before one has given the bounds.
func tokenBoundText(res *Result) string {
	for _, t := range res.Trials {
		if tk := t.TokenLatencies; tk != nil && t.Percentile > 0 {
			return fmt.Sprintf("%s TTFT ≤ %s ms and TPOT ≤ %s ms", pctName(t.Percentile), fmtNum(tk.TTFTBoundMs), fmtNum(tk.TPOTBoundMs))
		}
	}
	return ""
}

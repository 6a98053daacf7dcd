package search

import (
	"fmt"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// NotMet names the criteria c misses (loadgen's names, in the order of
// result.json's invalid_reasons); nil when c is nil or all hold.
func NotMet(c *Criteria) []string {
	if c == nil {
		return nil
	}
	r := loadgen.Result{PerfConstraintsMet: c.LatencyMet, MinDurationMet: c.MinDurationMet, MinQueriesMet: c.MinQueriesMet,
		EarlyStoppingMet: c.EarlyStoppingMet, NoFailedSamples: c.NoFailedSamples}
	return r.NotMet()
}

// boundText is the latency bound at the percentile of res's trials, "p99 ≤
// 15 ms", or "" when they have none (v0.5 MultiStream's constraint is on
// skipped intervals; token latencies: tokenBoundText).
func boundText(res *Result) string {
	for _, t := range res.Trials {
		if t.LatencyBoundMs > 0 && t.Percentile > 0 {
			return fmt.Sprintf("%s ≤ %s ms", pctName(t.Percentile), fmtNum(t.LatencyBoundMs))
		}
	}
	return ""
}

func pctName(p float64) string { return "p" + fmt.Sprintf("%.4g", p*100) }

// criterionText is the search's criterion in words, with the bound once a
// trial has given it.
func criterionText(res *Result) string {
	switch res.JudgedBy {
	case JudgedByGoodput:
		slo := ""
		if res.SLO != nil {
			slo = " (" + res.SLO.String() + ")"
		}
		return fmt.Sprintf("goodput: at least %s%% of the samples issued meeting the SLO%s", fmtNum(res.GoodputPercent), slo)
	case JudgedByTokenLatency:
		tok := "the token latency constraint"
		if b := tokenBoundText(res); b != "" {
			tok += " (" + b + ")"
		}
		if res.Ruleset == string(loadgen.RulesetV05) {
			return fmt.Sprintf("a VALID run: %s, min duration, min query count and no failed samples", tok)
		}
		return tok + " with no failed samples"
	}
	lat := loadgen.CriterionLatency
	if b := boundText(res); b != "" {
		lat += " (" + b + ")"
	}
	if res.JudgedBy == JudgedByValidity {
		return fmt.Sprintf("a VALID run: the %s, min duration, min query count and no failed samples", lat)
	}
	return fmt.Sprintf("the %s with no failed samples", lat)
}

// judgedLine says how the trials were judged, and, for loadgen6, that
// LoadGen's FindPeakPerformance looks at the latency constraint alone.
func judgedLine(res *Result) string {
	switch res.JudgedBy {
	case JudgedByGoodput:
		return fmt.Sprintf("Trials judged by %s; failed samples meet none. The run's own verdict is shown but does not decide.", criterionText(res))
	case JudgedByTokenLatency:
		if res.Ruleset == string(loadgen.RulesetV05) {
			return fmt.Sprintf("Trials judged by %s (v0.5, token latencies).", criterionText(res))
		}
		return fmt.Sprintf("Trials judged by %s: with use_token_latencies LoadGen's latency constraint is the TTFT and TPOT "+
			"percentiles against their bounds. Early stopping, min duration and min query count are shown but do not decide, "+
			"so a passing trial may be an INVALID run.", criterionText(res))
	}
	if res.JudgedBy == JudgedByValidity {
		return fmt.Sprintf("Trials judged by %s (v0.5).", criterionText(res))
	}
	return fmt.Sprintf("Trials judged by %s. LoadGen's FindPeakPerformance (loadgen6) judges a trial by its latency "+
		"constraint only; early stopping, min duration and min query count are shown but do not decide, "+
		"so a passing trial may be an INVALID run.", criterionText(res))
}

// peakLine is the answer with the criterion it was judged by and, said
// outright, whether the peak trial is a valid run on its own.
func peakLine(res *Result, t Trial) string {
	head := fmt.Sprintf("Peak: %s %s (trial %d) by %s", fmtNum(res.Peak), res.Unit, res.PeakTrial, criterionText(res))
	if res.Unit == UnitQPS && res.Reported > 0 {
		// The figure LoadGen reports is the peak trial's scheduled rate,
		// not the target it was asked (v0.5: the least of the verifying
		// runs'): one line says which to use.
		head = fmt.Sprintf("Peak: %s scheduled samples/s, the figure to report (trial %d, asked %s %s) by %s",
			fmtNum(res.Reported), res.PeakTrial, fmtNum(res.Peak), res.Unit, criterionText(res))
	}
	switch {
	case t.Verdict == "VALID":
		return head + "; as a single run it is VALID"
	case len(NotMet(t.Criteria)) > 0:
		return head + "; as a single run it is INVALID: " + loadgen.NotMetText(NotMet(t.Criteria))
	case t.Verdict != "":
		return head + "; as a single run it is " + t.Verdict
	}
	return head
}

package runlog

import (
	"fmt"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// shapeHead opens a shaped run's summary line: a load shape is no LoadGen
// scenario, so the line says whose verdict it is, the SLO's, or that there
// is none (loadgen.NAReason).
func shapeHead(res *loadgen.Result) string {
	ls := res.LoadShape
	if ls.VerdictBy != loadgen.VerdictBySLO {
		if res.Validity == "INVALID" {
			// No SLO, yet not N/A: the shape ended early (loadgen's
			// shapeVerdict); the line's reasons say so.
			return "Load shape (" + shapeKind(res) + "), no SLO: INVALID"
		}
		return "Load shape (" + shapeKind(res) + "): " + loadgen.NAReason
	}
	return fmt.Sprintf("Load shape (%s), judged by the SLO %s: %s", shapeKind(res), ls.SLO, res.Validity)
}

// shapeKind names what the shape has: its stages, its models.
func shapeKind(res *loadgen.Result) string {
	var parts []string
	if n := len(res.Stages); n > 0 {
		parts = append(parts, plural(n, "stage"))
	}
	if n := len(res.Models); n > 0 {
		parts = append(parts, plural(n, "model"))
	}
	if len(parts) == 0 {
		return "not a LoadGen scenario"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// shapeRateText is a shaped run's rate: completed against the shape's mean
// rate (its arrivals over its length), not server_target_qps, which the
// shape replaced.
func shapeRateText(res *loadgen.Result) string {
	return fmt.Sprintf("%.2f samples/s completed vs %.6g mean rate asked", res.CompletedSamplesPerSec, res.Effective.TargetQPS)
}

// shapeLines are a shaped run's lines after its summary: one a stage (its
// span, rate asked → issued and completed, p99, failures, goodput) and one
// a model (counts, p99, failures), each starting on its own line.
func shapeLines(res *loadgen.Result) string {
	var b strings.Builder
	for _, s := range res.Stages {
		asked := fmt.Sprintf("%.6g/s", s.RateAsked)
		if s.RateFrom != nil && s.RateTo != nil {
			asked = fmt.Sprintf("%.6g→%.6g/s", *s.RateFrom, *s.RateTo)
		}
		fmt.Fprintf(&b, "\n  stage %d (%.6g–%.6g s): %s asked → %.2f/s issued, %.2f/s completed; p99 %s; %d of %d failed%s",
			s.Stage, s.StartS, s.EndS, asked, s.RateAchieved, s.CompletedPerSecond, msAt(s.SampleLatency, 0.99),
			s.SamplesFailed, s.SamplesIssued, partTokens(s.TTFT, s.GoodputSamplesPerSecond))
	}
	for _, m := range res.Models {
		fmt.Fprintf(&b, "\n  model %s: %d issued, %d completed, %d failed; p50 %s, p99 %s%s",
			m.Model, m.SamplesIssued, m.SamplesCompleted, m.SamplesFailed, msAt(m.SampleLatency, 0.5), msAt(m.SampleLatency, 0.99),
			partTokens(m.TTFT, m.GoodputSamplesPerSecond))
	}
	return b.String()
}

// partTokens is a part's TTFT p99 and goodput, where it has them.
func partTokens(ttft *loadgen.TokenStats, goodput *float64) string {
	var s string
	if ttft != nil {
		s += fmt.Sprintf("; TTFT p99 %.3f ms", float64(ttft.P99)/1e6)
	}
	if goodput != nil {
		s += fmt.Sprintf("; goodput %.2f samples/s", *goodput)
	}
	return s
}

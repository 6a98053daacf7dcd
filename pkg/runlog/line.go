package runlog

import (
	"fmt"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/stats"
)

// SummaryLine is a one-paragraph account of a run for a terminal: scenario,
// verdict with its reasons, achieved against target rate, latency
// percentiles, failures and issue lateness, and the result's warnings;
// then, when the server's statistics or metrics tell, where the time went
// (Breakdown) in a sentence of its own.
func SummaryLine(res *loadgen.Result) string {
	if res == nil {
		return "no result"
	}
	var b strings.Builder
	switch cl := res.ClosedLoop; {
	case cl != nil:
		// Not an MLPerf scenario: the line must not read as a verdict.
		fmt.Fprintf(&b, "Closed loop, concurrency %d (not an MLPerf scenario; no VALID/INVALID verdict): %.2f samples/s completed",
			cl.Concurrency, cl.CompletedSamplesPerSec)
	case res.LoadShape != nil:
		b.WriteString(shapeHead(res))
	default:
		fmt.Fprintf(&b, "%s (%s): %s", res.Scenario, res.Ruleset, res.Validity)
	}
	if len(res.InvalidReasons) > 0 {
		// Reasons quote LoadGen's multi-line texts; a terminal line is one paragraph.
		fmt.Fprintf(&b, " (%s)", strings.Join(strings.Fields(strings.Join(res.InvalidReasons, "; ")), " "))
	}
	if note := MinDurationNote(res); note != "" && res.LoadShape == nil {
		fmt.Fprintf(&b, " (netloadgen: %s)", note)
	}
	if res.LoadShape != nil {
		b.WriteString(". " + shapeRateText(res))
	} else if res.ClosedLoop == nil {
		b.WriteString(". ")
		if s := SaturationText(res); s != "" {
			b.WriteString("Sustained: " + s + ". ")
		}
		b.WriteString(rateText(res))
	}
	latency, what := loadgen.Answered(res.SampleLatency, res.SampleLatencyAnswered), "latency"
	if res.Scenario == "MultiStream" {
		latency, what = loadgen.Answered(res.QueryLatency, res.QueryLatencyAnswered), "query latency"
	}
	fmt.Fprintf(&b, "; %s p50 %s, p90 %s, p99 %s%s", what, msAt(latency, 0.50), msAt(latency, 0.90), msAt(latency, 0.99), answeredNote(latency))
	b.WriteString(tokenSummary(res))
	b.WriteString(sessionSummary(res))
	b.WriteString(tokenLatencySummary(res))
	fmt.Fprintf(&b, "; %d of %d samples failed%s", res.SamplesFailed, res.SamplesIssued, failureKinds(res.Failures))
	if res.IssueLateness.Count > 0 && res.ClosedLoop == nil { // a closed loop has no schedule to be late for
		fmt.Fprintf(&b, "; issue lateness p99 %s", msAt(res.IssueLateness, 0.99))
	}
	fmt.Fprintf(&b, "; %d queries in %.3f s", res.QueriesIssued, time.Duration(res.DurationNs).Seconds())
	if ev := EarlyVerdictText(res); ev != "" {
		fmt.Fprintf(&b, "; %s", ev)
	} else if res.EndReason != "" && res.EndReason != loadgen.StopCompleted {
		fmt.Fprintf(&b, "; ended early: %s", res.EndReason)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "; warning: %s", strings.Join(strings.Fields(w), " "))
	}
	b.WriteString(".")
	if bd := Breakdown(res); bd != "" {
		fmt.Fprintf(&b, " Where the time went: %s.", bd)
	}
	b.WriteString(shapeLines(res))
	return b.String()
}

// rateText is the achieved rate against the one the run was set up for:
// the scheduled QPS for Server, the expected rate that sized the trace
// otherwise.
func rateText(res *loadgen.Result) string {
	target := res.Effective.TargetQPS
	switch res.Scenario {
	case "Server":
		return fmt.Sprintf("%.2f samples/s completed vs %.6g target QPS", res.CompletedSamplesPerSec, res.TargetQPS)
	case "Offline":
		return fmt.Sprintf("%.2f samples/s vs %.6g expected", res.SamplesPerSecond, target)
	case "SingleStream":
		return fmt.Sprintf("%.2f QPS vs %.6g expected", res.QPSWithLoadgenOverhead, target)
	}
	qps := 0.0
	if res.DurationNs > 0 {
		qps = float64(res.QueriesIssued) / time.Duration(res.DurationNs).Seconds()
	}
	return fmt.Sprintf("%.2f QPS vs %.6g expected", qps, target)
}

// answeredNote says, beside the percentiles of an answered table
// (loadgen.Answered: count the answered samples, failed the others), how
// many failed; "" when none did, or for LoadGen's own table of a result
// written before answered tables, whose failed are among its count.
func answeredNote(ls loadgen.LatencyStats) string {
	if ls.Failed == 0 {
		return ""
	}
	if ls.Count == 0 {
		return fmt.Sprintf(" (none answered, %d failed)", ls.Failed)
	}
	return fmt.Sprintf(" over the %d answered, %d failed", ls.Count, ls.Failed)
}

// msAt formats a percentile in milliseconds; a failed sample at that rank
// has no latency.
func msAt(ls loadgen.LatencyStats, p float64) string {
	v, ok := ls.At(p)
	switch {
	case !ok:
		return "n/a"
	case v == stats.FailedLatency:
		return "failed"
	}
	return fmt.Sprintf("%.3f ms", float64(v)/1e6)
}

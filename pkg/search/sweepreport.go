package search

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// sweepSummary is a sweep as text: the latency-vs-load table, then p99
// against the rate as a bar plot, then how the sweep ended.
func sweepSummary(res *Result) string {
	var b strings.Builder
	what := "rates"
	if res.Unit == UnitSpeed {
		what = "trace speeds"
	}
	fmt.Fprintf(&b, "Load sweep: %s %s, %d %s\n", res.Ruleset, res.Scenario, len(res.Trials), what)
	switch bt := boundText(res); {
	case res.Unit == UnitSpeed:
		// A trace's replay is no LoadGen scenario: LoadGen's bound does not
		// judge it (docs/load-shapes.md).
		fmt.Fprintf(&b, "Verdict: each trial's own, as a load shape's: its SLO's (--slo), or N/A without one.\n")
	case bt != "":
		fmt.Fprintf(&b, "Verdict: each trial's own validity as a run; the bound is %s.\n", bt)
	}
	fmt.Fprintln(&b)
	writeSweepTable(&b, res)
	fmt.Fprintln(&b)
	writeSweepPlot(&b, res, plotWidth)
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "Ended: %s\n", res.EndReason)
	fmt.Fprintf(&b, "Trials: %d; total time %.1f s\n", len(res.Trials), res.DurationS)
	return b.String()
}

// writeSweepTable writes one row per trial: the rate asked, the rate
// completed, the latency percentiles in readable units, the samples over
// the bound and the run's verdict.
func writeSweepTable(w io.Writer, res *Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	asked := "rate asked/s"
	if res.Unit == UnitSpeed {
		// A trace's replay: its trials differ by speed, their rates are
		// the trace's.
		asked = "trace speed"
	}
	fmt.Fprintf(tw, "trial\t%s\tcompleted/s\tp50\tp90\tp99\tover bound\tverdict\tduration s\t\n", asked)
	for _, t := range res.Trials {
		p50, p90, p99 := "-", "-", "-"
		if l := shownLatency(t); l != nil {
			p50, p90, p99 = fmtMs(l.P50), fmtMs(l.P90), fmtMs(l.P99)
		}
		p99 += failedNote(t)
		verdict := t.Verdict
		if t.EarlyVerdict != "" {
			verdict += " (stopped early)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%.1f\t%s\t%s\t%s\t%d\t%s\t%.1f\t\n", t.Index, fmtNum(t.Target), t.Achieved, p50, p90, p99,
			t.OverBound, verdict, t.DurationS)
	}
	tw.Flush()
}

// shownLatency is the latencies a person reads of trial t: over its
// answered samples when some failed and the record has them (Latency, as
// LoadGen counts, lands on a failed sample's INT64_MAX, shown "failed").
func shownLatency(t Trial) *Percentiles {
	if t.FailedSamples > 0 && t.LatencyAnswered != nil {
		return t.LatencyAnswered
	}
	return t.Latency
}

// failedNote is " (N failed)" beside trial t's answered latency, "" when
// none failed.
func failedNote(t Trial) string {
	if t.FailedSamples == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d failed)", t.FailedSamples)
}

// plotWidth is the longest bar of the p99 plot, in characters.
const plotWidth = 40

// writeSweepPlot draws p99 against the rate, one bar per trial, scaled to
// the largest p99; a "|" in a bar's row marks the latency bound when it
// falls within the plot.
func writeSweepPlot(w io.Writer, res *Result, width int) {
	top, bound := 0.0, 0.0
	for _, t := range res.Trials {
		if l := shownLatency(t); l != nil {
			top = max(top, l.P99)
		}
		bound = max(bound, t.LatencyBoundMs)
	}
	against, unit := "rate", "/s"
	if res.Unit == UnitSpeed {
		against, unit = "trace speed", "x"
	}
	if top <= 0 {
		fmt.Fprintf(w, "p99 vs %s: no latencies to plot\n", against)
		return
	}
	head := "p99 vs " + against + " (█ p99"
	if bound > 0 && bound <= top {
		head += fmt.Sprintf(", | the bound %s", fmtMs(bound))
	}
	fmt.Fprintln(w, head+")")
	label := 0
	for _, t := range res.Trials {
		label = max(label, len(fmtNum(t.Target)))
	}
	for _, t := range res.Trials {
		fmt.Fprintf(w, "%*s%s %s\n", label, fmtNum(t.Target), unit, plotRow(t, top, bound, width))
	}
}

// plotRow is one trial's bar and its value.
func plotRow(t Trial, top, bound float64, width int) string {
	l := shownLatency(t)
	if l == nil {
		return "│ -" + failedNote(t)
	}
	v := l.P99
	if v == FailedPercentile {
		return "│ failed" + failedNote(t)
	}
	n := int(v/top*float64(width) + 0.5)
	row := []rune(strings.Repeat("█", n) + strings.Repeat(" ", width-n))
	if bound > 0 && bound <= top {
		if at := int(bound/top*float64(width) + 0.5); at >= 0 && at < width && at >= n {
			row[at] = '|'
		}
	}
	return "│" + strings.TrimRight(string(row), " ") + " " + fmtMs(v) + failedNote(t)
}

// fmtMs is a latency in ms in a readable unit, to three significant
// digits: µs below 1 ms, s from 1 s.
func fmtMs(ms float64) string {
	switch {
	case ms == FailedPercentile:
		return "failed"
	case ms < 1:
		return sig3(ms*1000) + " µs"
	case ms < 1000:
		return sig3(ms) + " ms"
	}
	return sig3(ms/1000) + " s"
}

// sig3 is v to three significant digits, zeros kept (1.50, 12.5, 250).
func sig3(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// FmtRate is a rate as the sweep's table and plot print it.
func FmtRate(v float64) string { return fmtNum(v) }

package mlperflog

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

const separator = "================================================"

// NetworkSectionTitle heads netloadgen's own part of the summary, written
// after everything LoadGen writes.
const NetworkSectionTitle = "netloadgen Network Stats (added by netloadgen; not part of LoadGen's summary)"

// WriteSummary writes mlperf_log_summary.txt in LoadGen 6.0.17's layout
// (results.cc LogSummary, TestSettingsInternal::LogSummary and the
// warning/error footer; LOADGEN-REFERENCE.md §6.1), then netloadgen's own
// section. The result line is "VALID" only if s.Valid().
func WriteSummary(w io.Writer, s *Summary) error {
	if err := s.check(); err != nil {
		return err
	}
	var b strings.Builder
	writeResults(&b, s)
	writeAdditionalStats(&b, s)
	writeTestParameters(&b, &s.Settings)
	b.WriteString(footer(s.Warnings, s.Errors))
	writeNetwork(&b, s)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// WriteSummaryFooter writes only LoadGen's warning/error footer: what its
// summary holds after a run that reports no performance results (AccuracyOnly).
func WriteSummaryFooter(w io.Writer, warnings, errors int) error {
	if _, err := io.WriteString(w, footer(warnings, errors)); err != nil {
		return fmt.Errorf("write summary footer: %w", err)
	}
	return nil
}

func line(b *strings.Builder, parts ...string) {
	for _, p := range parts {
		b.WriteString(p)
	}
	b.WriteByte('\n')
}

func ns(d time.Duration) string { return strconv.FormatInt(int64(d), 10) }

func yesNO(ok bool) string {
	if ok {
		return "Yes"
	}
	return "NO"
}

func writeResults(b *strings.Builder, s *Summary) {
	st := &s.Settings
	line(b, separator)
	line(b, "MLPerf Results Summary")
	line(b, separator)
	line(b, "SUT name : ", neutral(s.SUTName))
	line(b, "Scenario : ", st.Scenario.String())
	line(b, "Mode     : ", st.Mode.String())
	switch st.Scenario {
	case trace.SingleStream, trace.MultiStream:
		line(b, percentileLabel(st.TargetLatencyPercentile, 1), "th percentile latency (ns) : ", ns(s.TargetPercentileLatency))
	case trace.Server:
		line(b, "Completed samples per second    : ", fixed(s.CompletedSamplesPerSecond, 2))
	case trace.Offline:
		line(b, "Samples per second: ", formatDouble(s.SamplesPerSecond))
	}
	if t := s.Tokens; t != nil {
		switch st.Scenario {
		case trace.SingleStream, trace.MultiStream:
			line(b, percentileLabel(st.TargetLatencyPercentile, 1), "th first token percentile latency (ns) : ", ns(t.FirstTokenTarget))
		case trace.Server:
			line(b, "Completed tokens per second: ", fixed(t.CompletedTokensPerSecond, 2))
		case trace.Offline:
			line(b, "Tokens per second: ", formatDouble(t.TokensPerSecond))
		}
	}
	if in := s.Inferred; in != nil {
		// results.cc: Server through DoubleToString (2 decimals), Offline
		// through the stream's default double format.
		switch st.Scenario {
		case trace.Server:
			line(b, "Completed tokens per second (inferred): ", fixed(in.CompletedTokensPerSecond, 2))
		case trace.Offline:
			line(b, "Tokens per second (inferred): ", formatDouble(in.TokensPerSecond))
		}
	}

	if s.Valid() {
		line(b, "Result is : VALID")
	} else {
		line(b, "Result is : INVALID")
	}
	if st.Scenario == trace.Server {
		line(b, "  Performance constraints satisfied : ", yesNO(s.PerfConstraintsMet))
	}
	line(b, "  Min duration satisfied : ", yesNO(s.MinDurationMet))
	line(b, "  Min queries satisfied : ", yesNO(s.MinQueriesMet))
	line(b, "  Early stopping satisfied: ", yesNO(s.EarlyStoppingMet()))
	if !s.Valid() {
		line(b, "Recommendations:")
		for _, r := range recommendations(s) {
			line(b, " * ", r)
		}
	}
	switch {
	case st.Scenario == trace.Offline:
	case s.Tokens != nil:
		ttft, tpot := tokenEarlyStoppingTexts(s)
		line(b, "TTFT Early Stopping Result:")
		line(b, ttft)
		line(b, "TPOT Early Stopping Result:")
		line(b, tpot)
	default:
		line(b, "Early Stopping Result:")
		line(b, earlyStoppingText(s))
	}
}

func writeAdditionalStats(b *strings.Builder, s *Summary) {
	line(b)
	line(b, separator)
	line(b, "Additional Stats")
	line(b, separator)
	switch s.Settings.Scenario {
	case trace.SingleStream:
		line(b, "QPS w/ loadgen overhead         : ", fixed(s.QPSWithLoadgenOverhead, 2))
		line(b, "QPS w/o loadgen overhead        : ", fixed(s.QPSWithoutLoadgenOverhead, 2))
		line(b)
	case trace.Server:
		line(b, "Scheduled samples per second : ", fixed(s.ScheduledSamplesPerSecond, 2))
	case trace.MultiStream:
		line(b, "Per-query latency:  ")
		writeLatencyTable(b, &s.QueryLatencies)
	}
	if s.Settings.Scenario != trace.MultiStream {
		// LoadGen prints no per-sample table for MultiStream.
		writeLatencyTable(b, &s.SampleLatencies)
	}
	if s.Tokens != nil {
		writeTokenTables(b, s)
	}
}

// writeTokenTables writes LoadGen 6.0.17's token lines of Additional
// Stats, its labels as they are ("Time per Output Token" in the min, max
// and mean lines, "time to output token" in the percentile lines).
func writeTokenTables(b *strings.Builder, s *Summary) {
	t := s.Tokens
	line(b)
	switch s.Settings.Scenario {
	case trace.Offline:
		return
	case trace.SingleStream:
		line(b, "TPS w/ loadgen overhead         : ", fixed(t.TokenThroughputWithLoadgenOverhead, 2))
		line(b, "TPS w/o loadgen overhead        : ", fixed(t.TPSWithoutLoadgenOverhead, 2))
	case trace.Server:
		line(b, "Completed tokens per second                 : ", fixed(t.CompletedTokensPerSecond, 2))
	}
	line(b, "Min First Token latency (ns)                : ", ns(t.FirstToken.Min))
	line(b, "Max First Token latency (ns)                : ", ns(t.FirstToken.Max))
	line(b, "Mean First Token latency (ns)               : ", ns(t.FirstToken.Mean))
	for i, p := range latencyPercentiles {
		line(b, percentileLabel(p, 2), " percentile first token latency (ns)   : ", ns(t.FirstToken.P[i]))
	}
	line(b)
	line(b, "Min Time per Output Token (ns)                : ", ns(t.TPOT.Min))
	line(b, "Max Time per Output Token (ns)                : ", ns(t.TPOT.Max))
	line(b, "Mean Time per Output Token (ns)               : ", ns(t.TPOT.Mean))
	for i, p := range latencyPercentiles {
		line(b, percentileLabel(p, 2), " percentile time to output token (ns)   : ", ns(t.TPOT.P[i]))
	}
}

func writeLatencyTable(b *strings.Builder, l *LatencyStats) {
	line(b, "Min latency (ns)                : ", ns(l.Min))
	line(b, "Max latency (ns)                : ", ns(l.Max))
	line(b, "Mean latency (ns)               : ", ns(l.Mean))
	for i, p := range latencyPercentiles {
		line(b, percentileLabel(p, 2), " percentile latency (ns)   : ", ns(l.P[i]))
	}
}

func writeTestParameters(b *strings.Builder, st *Effective) {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	line(b)
	line(b, separator)
	line(b, "Test Parameters Used")
	line(b, separator)
	line(b, "samples_per_query : ", u(st.SamplesPerQuery))
	line(b, "target_qps : ", formatDouble(st.TargetQPS))
	if st.UseTokenLatencies {
		line(b, "ttft_latency (ns): ", u(st.ServerTTFTLatencyNs))
		line(b, "tpot_latency (ns): ", u(st.ServerTPOTLatencyNs))
	} else {
		line(b, "target_latency (ns): ", u(st.TargetLatencyNs))
	}
	line(b, "max_async_queries : ", u(st.MaxAsyncQueries))
	line(b, "min_duration (ms): ", u(st.MinDurationMs))
	line(b, "max_duration (ms): ", u(st.MaxDurationMs))
	line(b, "min_query_count : ", u(st.MinQueryCount))
	line(b, "max_query_count : ", u(st.MaxQueryCount))
	line(b, "qsl_rng_seed : ", u(st.QSLRNGSeed))
	line(b, "sample_index_rng_seed : ", u(st.SampleIndexRNGSeed))
	line(b, "schedule_rng_seed : ", u(st.ScheduleRNGSeed))
	line(b, "accuracy_log_rng_seed : ", u(st.AccuracyLog.RNGSeed))
	line(b, "accuracy_log_probability : ", formatDouble(st.AccuracyLog.Probability))
	line(b, "accuracy_log_sampling_target : ", u(st.AccuracyLog.SamplingTarget))
	line(b, "print_timestamps : ", bool01(st.PrintTimestamps))
	line(b, "performance_issue_unique : ", bool01(st.PerformanceIssueUnique))
	line(b, "performance_issue_same : ", bool01(st.PerformanceIssueSame))
	line(b, "performance_issue_same_index : ", u(st.PerformanceIssueSameIndex))
	line(b, "performance_sample_count : ", u(st.PerformanceSampleCount))
	line(b, "accuracy_sample_count : ", u(st.AccuracySampleCount))
}

// footer is LoadGen's closing lines (logging.cc): a blank line before each.
func footer(warnings, errors int) string {
	var b strings.Builder
	switch {
	case warnings <= 0:
		b.WriteString("\nNo warnings encountered during test.\n")
	case warnings == 1:
		b.WriteString("\n1 warning encountered. See detailed log.\n")
	default:
		b.WriteString("\n" + strconv.Itoa(warnings) + " warnings encountered. See detailed log.\n")
	}
	switch {
	case errors <= 0:
		b.WriteString("\nNo errors encountered during test.\n")
	case errors == 1:
		b.WriteString("\n1 ERROR encountered. See detailed log.\n")
	default:
		b.WriteString("\n" + strconv.Itoa(errors) + " ERRORS encountered. See detailed log.\n")
	}
	return b.String()
}

// writeNetwork writes netloadgen's section. Its lines start with words no
// official tool's pattern anchors on (LOADGEN-REFERENCE.md §6.5) and text
// from outside goes through neutral, so appending it changes nothing they
// read.
func writeNetwork(b *strings.Builder, s *Summary) {
	n := &s.Network
	line(b)
	line(b, separator)
	line(b, NetworkSectionTitle)
	line(b, separator)
	if n.Ruleset != "" {
		line(b, "Ruleset : ", neutral(n.Ruleset))
	}
	for _, f := range n.Headlines {
		line(b, neutral(f.Key), " : ", neutral(f.Value))
	}
	line(b, "Failed samples : ", strconv.FormatInt(n.FailedSamples, 10))
	if n.FailedSamples > 0 {
		line(b, "  (failed samples count as over every latency bound; in the tables above their latency is ",
			strconv.FormatInt(int64(failedLatencyNs), 10), ")")
	}
	if len(n.Failures) > 0 {
		line(b, "Failures by kind:")
		for _, f := range n.Failures {
			line(b, " * ", neutral(f))
		}
	}
	if len(n.FirstErrors) > 0 {
		line(b, "First errors:")
		for _, e := range n.FirstErrors {
			line(b, " * ", neutral(e))
		}
	}
	for _, c := range n.Constraints {
		line(b, "Constraint ", neutral(c.Name), " satisfied : ", yesNO(c.Met))
	}
	for _, w := range n.Warnings {
		line(b, "Warning : ", neutral(w))
	}
	writeReadable(b, s)
	if l := n.IssueLateness; l != nil {
		line(b, "Issue lateness, actual issue time minus scheduled time:")
		line(b, "  Min issue lateness (ns)      : ", ns(l.Min))
		line(b, "  Max issue lateness (ns)      : ", ns(l.Max))
		line(b, "  Mean issue lateness (ns)     : ", ns(l.Mean))
		for i, p := range latencyPercentiles {
			line(b, "  ", percentileLabel(p, 2), " percentile issue lateness (ns) : ", ns(l.P[i]))
		}
	}
	// Extra lines are indented: a key must not start a line a tool anchors on.
	for _, f := range n.Extra {
		line(b, "  ", neutral(f.Key), " : ", neutral(f.Value))
	}
}

// writeReadable repeats the sample latency and issue lateness tables' main
// figures in units a reader takes in at a glance (LoadGen's lines, in ns,
// stay as they are above).
func writeReadable(b *strings.Builder, s *Summary) {
	line(b, "In readable units:")
	if a := s.Network.AnsweredSampleLatencies; a != nil && s.Network.FailedSamples > 0 {
		// A failed sample's latency is LoadGen's INT64_MAX: the tail a
		// person reads is the answered samples', the failures counted
		// beside it.
		line(b, "  sample latency : ", readableTable(*a), " (answered samples; ", strconv.FormatInt(s.Network.FailedSamples, 10), " failed)")
	} else {
		line(b, "  sample latency : ", readableTable(s.SampleLatencies))
	}
	if l := s.Network.IssueLateness; l != nil {
		line(b, "  issue lateness : ", readableTable(*l))
	}
}

// readableTable is min, mean, p50, p90, p99 and max of a table.
func readableTable(l LatencyStats) string {
	return "min " + Readable(l.Min) + ", mean " + Readable(l.Mean) + ", p50 " + Readable(l.P[0]) +
		", p90 " + Readable(l.P[1]) + ", p99 " + Readable(l.P[4]) + ", max " + Readable(l.Max)
}

// Readable is a latency in the unit that suits it, with three significant
// digits ("850 µs", "12.3 ms", "1.25 s"); a failed sample's latency is
// "failed".
func Readable(d time.Duration) string {
	if d == failedLatencyNs {
		return "failed"
	}
	v, unit := float64(d), "ns"
	switch a := max(d, -d); {
	case a >= time.Second:
		v, unit = v/1e9, "s"
	case a >= time.Millisecond:
		v, unit = v/1e6, "ms"
	case a >= time.Microsecond:
		v, unit = v/1e3, "µs"
	}
	prec := 2
	switch a := max(v, -v); {
	case unit == "ns" || a >= 100:
		prec = 0
	case a >= 10:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + " " + unit
}

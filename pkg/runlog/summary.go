package runlog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
	"github.com/netloadgen/netloadgen/pkg/version"
)

// ErrInvalidResult: a Result that cannot be written (nil, an unknown
// scenario, or latency tables it claims but does not hold).
var ErrInvalidResult = errors.New("runlog: invalid result")

// reported are the percentiles of LoadGen's latency tables, in
// mlperflog.LatencyStats.P order; the engine computes the same ones.
var reported = [6]float64{0.50, 0.90, 0.95, 0.97, 0.99, 0.999}

// buildSummary turns a Result (and, when given, the run's exact sample
// record) into mlperflog's Summary. Warnings and Errors are left for the
// caller to fill from the detail log.
func buildSummary(run *loadgen.Run, res *loadgen.Result, o *Options) (*mlperflog.Summary, error) {
	settings, err := effectiveSettings(res)
	if err != nil {
		return nil, err
	}
	sc := settings.Scenario
	s := &mlperflog.Summary{
		SUTName:                   sutName(res, o),
		Settings:                  settings,
		CompletedSamplesPerSecond: res.CompletedSamplesPerSec,
		ScheduledSamplesPerSecond: res.ScheduledSamplesPerSec,
		SamplesPerSecond:          res.SamplesPerSecond,
		QPSWithLoadgenOverhead:    res.QPSWithLoadgenOverhead,
		QPSWithoutLoadgenOverhead: res.QPSWithoutLoadgenOverhead,
		MinDurationMet:            res.MinDurationMet,
		MinQueriesMet:             res.MinQueriesMet,
		PerfConstraintsMet:        res.PerfConstraintsMet,
		QueryCount:                res.QueriesIssued,
		OverLatencyCount:          res.OverLatencyCount,
	}

	var samples *stats.Latencies
	if run != nil {
		l := run.Samples().Latencies()
		samples = &l
	}
	if samples != nil && samples.Len() > 0 {
		if s.SampleLatencies, err = mlperflog.NewLatencyStats(*samples); err != nil {
			return nil, fmt.Errorf("sample latencies: %w", err)
		}
	} else if s.SampleLatencies, err = tableOf(res.SampleLatency); err != nil {
		return nil, fmt.Errorf("%w: sample latencies: %w", ErrInvalidResult, err)
	}
	if s.QueryLatencies, err = tableOf(res.QueryLatency); err != nil {
		return nil, fmt.Errorf("%w: query latencies: %w", ErrInvalidResult, err)
	}

	p := settings.TargetLatencyPercentile
	switch sc {
	case trace.SingleStream:
		s.TargetPercentileLatency = percentileOf(samples, res.SampleLatency, p)
	case trace.MultiStream:
		s.TargetPercentileLatency = percentileOf(nil, res.QueryLatency, p)
	}

	var notes []mlperflog.Field
	if tl := res.TokenLatencies; tl != nil {
		// Judged by TTFT and TPOT: their early stopping replaces the
		// latency one.
		if s.Tokens, err = tokenLatencies(tl, sc); err != nil {
			return nil, err
		}
	} else if s.EarlyStopping, notes, err = earlyStopping(res, sc, samples); err != nil {
		return nil, err
	}
	if in := res.InferredTokens; in != nil {
		s.Inferred = &mlperflog.InferredTokens{CompletedTokensPerSecond: in.CompletedTokensPerSecond, TokensPerSecond: in.TokensPerSecond}
	}
	s.Network = network(res, o, notes)
	if s.Network.AnsweredSampleLatencies, err = answeredTable(samples, res); err != nil {
		return nil, err
	}
	// The engine's verdict is the run's verdict. Every condition it checks
	// is mapped above; should it ever reject a run for a reason this mapping
	// misses, say so in the summary rather than print VALID next to an
	// INVALID result.json.
	if s.Valid() && !res.Valid {
		s.Network.Constraints = append(s.Network.Constraints, mlperflog.Constraint{
			Name: "engine_verdict", Met: false, Recommendation: strings.Join(res.InvalidReasons, "; "),
		})
	}
	if !s.Valid() && res.Valid {
		o.logger().Warn("LoadGen summary is INVALID but the engine's result is VALID", "scenario", sc.String())
	}
	return s, nil
}

func sutName(res *loadgen.Result, o *Options) string {
	if o.SUTName != "" {
		return o.SUTName
	}
	return res.SUTName
}

// effectiveSettings rebuilds LoadGen's effective settings from the Result,
// so the logs can be written (again) from result.json alone.
func effectiveSettings(res *loadgen.Result) (mlperflog.Effective, error) {
	e := res.Effective
	sc, err := trace.ParseScenario(e.Scenario)
	if err != nil {
		return mlperflog.Effective{}, fmt.Errorf("%w: %w", ErrInvalidResult, err)
	}
	r := res.Requested
	accuracyCount := uint64(res.QSLTotalSampleCount)
	if r.AccuracySampleCountOverride > 0 {
		accuracyCount = r.AccuracySampleCountOverride
	}
	return mlperflog.Effective{
		Effective: trace.Effective{
			Scenario: sc, TargetQPS: e.TargetQPS, TargetLatencyNs: e.TargetLatencyNs,
			TargetLatencyPercentile: e.TargetLatencyPercentile, MaxAsyncQueries: e.MaxAsyncQueries,
			SamplesPerQuery: e.SamplesPerQuery, TargetDurationMs: e.TargetDurationMs,
			MinDurationMs: e.MinDurationMs, MaxDurationMs: e.MaxDurationMs,
			MinQueryCount: e.MinQueryCount, MaxQueryCount: e.MaxQueryCount, MinSampleCount: e.MinSampleCount,
			PerformanceSampleCount: e.PerformanceSampleCount,
			QSLRNGSeed:             e.QSLRNGSeed, SampleIndexRNGSeed: e.SampleIndexRNGSeed, ScheduleRNGSeed: e.ScheduleRNGSeed,
			SampleConcatenatePermutation: e.SampleConcatenatePermutation,
			PerformanceIssueUnique:       e.PerformanceIssueUnique, PerformanceIssueSame: e.PerformanceIssueSame,
			PerformanceIssueSameIndex: e.PerformanceIssueSameIndex,
		},
		Mode:                r.Mode,
		AccuracyLog:         accuracyLogSettings(r),
		PrintTimestamps:     r.PrintTimestamps,
		AccuracySampleCount: accuracyCount,
		UseTokenLatencies:   r.UseTokenLatencies,
		ServerTTFTLatencyNs: r.ServerTTFTLatencyNs,
		ServerTPOTLatencyNs: r.ServerTPOTLatencyNs,
	}, nil
}

func accuracyLogSettings(r loadgen.Settings) mlperflog.AccuracyLogSettings {
	return mlperflog.AccuracyLogSettings{
		RNGSeed: r.AccuracyLogRNGSeed, Probability: r.AccuracyLogProbability, SamplingTarget: r.AccuracyLogSamplingTarget,
	}
}

// tableOf converts the engine's exact latency table to LoadGen's. An empty
// table (no samples) is all zeros, as LoadGen prints for an empty run.
func tableOf(ls loadgen.LatencyStats) (mlperflog.LatencyStats, error) {
	if ls.Count == 0 {
		return mlperflog.LatencyStats{}, nil
	}
	t := mlperflog.LatencyStats{
		Min: time.Duration(ls.MinNs), Max: time.Duration(ls.MaxNs), Mean: time.Duration(ls.MeanNs),
	}
	for i, p := range reported {
		v, ok := ls.At(p)
		if !ok {
			return mlperflog.LatencyStats{}, fmt.Errorf("no %v percentile among %d latencies", p, ls.Count)
		}
		t.P[i] = v
	}
	return t, nil
}

// answeredTable is the sample latency table over the answered samples,
// when any failed: from the record when there is one (its first n − failed
// sorted values), else from result.json's sample_latency_answered; nil
// when none failed or a result.json written before it has none.
func answeredTable(samples *stats.Latencies, res *loadgen.Result) (*mlperflog.LatencyStats, error) {
	if res.SamplesFailed == 0 {
		return nil, nil
	}
	var t mlperflog.LatencyStats
	var err error
	switch {
	case samples != nil && samples.Len() > samples.Failed():
		t, err = mlperflog.NewLatencyStats(samples.Completed())
	case res.SampleLatencyAnswered != nil && res.SampleLatencyAnswered.Count > 0:
		t, err = tableOf(*res.SampleLatencyAnswered)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: answered sample latencies: %w", ErrInvalidResult, err)
	}
	return &t, nil
}

// percentileOf is the exact latency at p: from the record when there is one,
// else from the Result's table (which holds the target percentile).
func percentileOf(l *stats.Latencies, ls loadgen.LatencyStats, p float64) time.Duration {
	if l != nil && l.Len() > 0 {
		if v, err := l.Percentile(p); err == nil {
			return v
		}
	}
	v, _ := ls.At(p)
	return v
}

// earlyStopping maps the engine's early-stopping outcome onto what
// mlperflog needs for the scenario (Server: the Server verdict; SingleStream:
// the estimate at the target percentile and at p99; MultiStream: the
// estimate over query latencies; Offline: none).
//
// Under v0.5 there is no early stopping, but LoadGen 6's summary layout has
// no way to say "not applicable": the verdict is then marked met, the
// estimate lines carry the exact percentiles (nothing discarded), and a note
// in netloadgen's section says so.
func earlyStopping(res *loadgen.Result, sc trace.Scenario, samples *stats.Latencies) (mlperflog.EarlyStopping, []mlperflog.Field, error) {
	var es mlperflog.EarlyStopping
	if sc == trace.Offline {
		return es, nil, nil
	}
	r := res.EarlyStopping
	if r == nil {
		if res.Ruleset == loadgen.RulesetLoadGen6 {
			return es, nil, fmt.Errorf("%w: a loadgen6 %v result without early stopping", ErrInvalidResult, sc)
		}
		return vacuousEarlyStopping(res, sc, samples), []mlperflog.Field{{
			Key:   "early_stopping",
			Value: "not applied under ruleset " + string(res.Ruleset) + "; the early-stopping lines show the exact percentiles, nothing discarded",
		}}, nil
	}
	switch sc {
	case trace.Server:
		es.Server = &stats.ServerEarlyStopping{Met: r.Met, Queries: r.Queries, OverLatency: r.OverLatency, Required: r.Required}
		return es, nil, nil
	case trace.SingleStream, trace.MultiStream:
		es.Estimate = &stats.PercentileEstimate{
			Met: r.Met, Queries: r.Queries, MinQueries: r.MinQueries, Discarded: r.Discarded, Latency: time.Duration(r.EstimateNs),
		}
	}
	if sc != trace.SingleStream {
		return es, nil, nil
	}
	// LoadGen's SingleStream summary also estimates p99 (to infer a
	// MultiStream figure). The Result keeps only its value, so recompute it
	// from the record, or from the counts when there is no record.
	f99, err := stats.NewMinPassingFinder(0.99, stats.EarlyStoppingConfidence)
	if err != nil {
		return es, nil, fmt.Errorf("p99 early stopping: %w", err)
	}
	if samples != nil && samples.Len() > 0 {
		e := f99.EstimatePercentile(*samples)
		es.Estimate99 = &e
		return es, nil, nil
	}
	minQ := f99.MinPassing(1) + 1 // PercentileEstimate.MinQueries: h(1)+1
	es.Estimate99 = &stats.PercentileEstimate{
		Met: r.Queries >= minQ, Queries: r.Queries, MinQueries: minQ, Latency: time.Duration(r.EstimateP99Ns),
	}
	return es, nil, nil
}

func vacuousEarlyStopping(res *loadgen.Result, sc trace.Scenario, samples *stats.Latencies) mlperflog.EarlyStopping {
	p := res.Effective.TargetLatencyPercentile
	switch sc {
	case trace.Server:
		return mlperflog.EarlyStopping{Server: &stats.ServerEarlyStopping{
			Met: true, Queries: res.QueriesIssued, OverLatency: res.OverLatencyCount,
		}}
	case trace.MultiStream:
		q := res.QueryLatency
		return mlperflog.EarlyStopping{Estimate: &stats.PercentileEstimate{
			Met: true, Queries: int64(q.Count), Latency: percentileOf(nil, q, p),
		}}
	}
	n := int64(res.SampleLatency.Count)
	return mlperflog.EarlyStopping{
		Estimate:   &stats.PercentileEstimate{Met: true, Queries: n, Latency: percentileOf(samples, res.SampleLatency, p)},
		Estimate99: &stats.PercentileEstimate{Met: true, Queries: n, Latency: percentileOf(samples, res.SampleLatency, 0.99)},
	}
}

// failedRecommendation is the advice of the no-failed-samples constraint;
// mlperflog itself already says that failures make a run invalid.
const failedRecommendation = "Fix the failing requests (see Failures by kind); a failed sample counts as over every latency bound."

// failuresNote accompanies LoadGen's advice in an INVALID summary when
// failures, not latency, broke LoadGen's criteria (Result.FailuresNotLatency):
// LoadGen, whose samples never fail, would advise on the rate.
const failuresNote = "failed samples, not latency, made this run INVALID (see Failures by kind below): fix them; the advice above on the rate or latency does not apply."

// generatorBoundNote accompanies LoadGen's advice in an INVALID summary when
// the result's generator_bound warning holds (loadgen.GeneratorBoundShare).
const generatorBoundNote = "the load generator's issue lateness may be the cause (see Warning below), not the SUT."

// network fills netloadgen's own section: what LoadGen does not know.
func network(res *loadgen.Result, o *Options, notes []mlperflog.Field) mlperflog.Network {
	n := mlperflog.Network{
		Ruleset:       string(res.Ruleset),
		FailedSamples: res.SamplesFailed,
		FirstErrors:   res.Errors,
		Failures:      FailureLines(res.Failures),
		Constraints: []mlperflog.Constraint{{
			Name: "no_failed_samples", Met: res.NoFailedSamples, Recommendation: failedRecommendation,
		}},
	}
	if t, err := tableOf(res.IssueLateness); err == nil && res.IssueLateness.Count > 0 {
		n.IssueLateness = &t
	}
	n.Warnings = res.Warnings
	for _, h := range []struct{ key, text string }{{"Early verdict", EarlyVerdictText(res)}, {"Sustained", SaturationText(res)}} {
		if h.text != "" {
			n.Headlines = append(n.Headlines, mlperflog.Field{Key: h.key, Value: h.text})
		}
	}
	n.MinDurationNote = MinDurationNote(res)
	switch {
	case res.FailuresNotLatency():
		// The answered samples met the bound: lateness did not break it.
		n.InvalidNote = failuresNote
	case res.GeneratorBound != nil:
		n.InvalidNote = generatorBoundNote
	}
	if m := res.MultiStreamV05; m != nil {
		n.Constraints = append(n.Constraints, mlperflog.Constraint{
			Name: "v0.5_multistream_skipped_intervals", Met: m.Met, Recommendation: "Reduce samples per query.",
		})
	}

	add := func(k, v string) { n.Extra = append(n.Extra, mlperflog.Field{Key: k, Value: v}) }
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	if o.TargetURL != "" {
		add("target_url", o.TargetURL)
	}
	if o.Model != "" {
		add("model", o.Model)
	}
	if res.Task != "" {
		add("task", res.Task)
	}
	add("end_reason", string(res.EndReason))
	if res.EndReason != loadgen.StopCompleted {
		add("end_message", res.EndMessage)
	}
	if w := res.Warmup; w != nil {
		add("warmup", fmt.Sprintf("%d ms before the timed run, discarded: %d samples issued, %d completed, %d failed",
			w.DurationMs, w.SamplesIssued, w.SamplesCompleted, w.SamplesFailed))
	}
	add("duration_ns", i64(res.DurationNs))
	add("samples_issued", i64(res.SamplesIssued))
	add("samples_completed", i64(res.SamplesCompleted))
	if res.DrainTimedOut {
		add("drain_timed_out", "true")
		add("unanswered_samples", i64(res.Unanswered))
	}
	// Written whether 0 or not: a reader can tell "none" from "not counted".
	add("requests_resent", i64(res.RequestsResent))
	if res.ProtocolErrors > 0 {
		add("protocol_errors", i64(res.ProtocolErrors))
	}
	if res.LateCompletions > 0 {
		add("late_completions", i64(res.LateCompletions))
	}
	if v := res.EarlyVerdict; v != nil && v.Stopped {
		add("early_verdict", v.Reason)
	}
	if res.CompliantLength {
		add("compliant_length", "yes")
	} else {
		add("compliant_length", "no")
		add("non_compliant", strings.Join(res.NonCompliant, "; "))
	}
	n.Extra = append(n.Extra, tokenLines(res)...)
	n.Extra = append(n.Extra, sessionLines(res)...)
	n.Extra = append(n.Extra, notes...)
	n.Extra = append(n.Extra, o.Extra...)
	add("version", version.String())
	return n
}

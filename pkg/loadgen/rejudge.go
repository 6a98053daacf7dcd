package loadgen

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// ErrInvalidRecord: a sample list that cannot be judged (no samples, a
// negative latency, counts that disagree).
var ErrInvalidRecord = errors.New("invalid sample list")

// Recorded is a finished run as its sample list (samples.txt) keeps it:
// what LoadGen's verdict and logs read of a run, and nothing of how the
// queries travelled. Times are ns from the start of the run.
type Recorded struct {
	SUTName                   string
	QSLTotalSampleCount       int
	QSLPerformanceSampleCount int
	QueriesIssued             int64
	FinalQueryScheduledTimeNs int64
	FinalQueryIssuedTimeNs    int64
	// FinalQueryAllSamplesDoneTimeNs: when the last issued query's samples
	// were all done.
	FinalQueryAllSamplesDoneTimeNs int64
	// Samples in sequence order (a MultiStream query's samples together;
	// any order for one sample per query).
	Samples []TokenSample
}

// Rejudge returns the Result a run with settings s would have had given
// what rec recorded: the same verdict, tables and token-latency figures,
// with no network part (no failures by kind, issue lateness or time
// series). It is how `loadgend rejudge` asks "would this run pass under
// other settings?" without running again.
func Rejudge(s Settings, rec Recorded) (*Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Scenario == trace.MultiStream && s.Ruleset == RulesetV05 {
		return nil, fmt.Errorf("%w: v0.5 MultiStream is judged by its issue ticks, which a sample list does not keep", ErrInvalidRecord)
	}
	if len(rec.Samples) == 0 || rec.QueriesIssued <= 0 {
		return nil, fmt.Errorf("%w: no samples (sample lines and queries_issued)", ErrInvalidRecord)
	}
	if rec.QSLTotalSampleCount <= 0 || rec.QSLPerformanceSampleCount <= 0 {
		return nil, fmt.Errorf("%w: qsl_total_sample_count and qsl_performance_sample_count must be at least 1, got %d and %d",
			ErrInvalidRecord, rec.QSLTotalSampleCount, rec.QSLPerformanceSampleCount)
	}
	e, err := trace.EffectiveSettings(s.TraceSettings(), trace.QSL{
		TotalSampleCount: uint64(max(rec.QSLTotalSampleCount, 0)), PerformanceSampleCount: uint64(max(rec.QSLPerformanceSampleCount, 0))})
	if err != nil {
		return nil, err
	}
	spq := 1
	switch s.Scenario {
	case trace.MultiStream:
		spq = int(e.SamplesPerQuery)
	case trace.Offline:
		// One query of every sample recorded (LoadGen's harness may
		// record more than samples_per_query).
		spq = len(rec.Samples)
	}
	samples, queries, failed, err := recordedLatencies(rec.Samples, spq)
	if err != nil {
		return nil, err
	}
	res := &Result{
		Ruleset: s.Ruleset, Scenario: s.Scenario.String(), Mode: s.Mode.String(), SUTName: rec.SUTName, Task: s.Task,
		Requested: s, Effective: effectiveOf(e),
		QSLTotalSampleCount: rec.QSLTotalSampleCount, QSLPerformanceSampleCount: rec.QSLPerformanceSampleCount,
		DurationNs: rec.FinalQueryAllSamplesDoneTimeNs, EndReason: StopCompleted, EndMessage: StopCompleted.message(),
		QueriesIssued: rec.QueriesIssued, QueriesCompleted: rec.QueriesIssued,
		SamplesIssued: int64(len(rec.Samples)), SamplesFailed: failed, SamplesCompleted: int64(len(rec.Samples)) - failed,
		FinalQueryScheduledTimeNs: rec.FinalQueryScheduledTimeNs, FinalQueryIssuedTimeNs: rec.FinalQueryIssuedTimeNs,
		FinalQueryAllSamplesDoneTimeNs: rec.FinalQueryAllSamplesDoneTimeNs,
	}
	if s.Scenario == trace.Server {
		res.TargetQPS = s.ServerTargetQPS
		res.OverLatencyCount = int64(samples.CountOver(time.Duration(e.TargetLatencyNs)))
	}
	res.SampleLatency = latencyStats(samples, e.TargetLatencyPercentile)
	res.QueryLatency = latencyStats(queries, e.TargetLatencyPercentile)
	res.SampleLatencyAnswered = answeredStats(samples, e.TargetLatencyPercentile)
	res.QueryLatencyAnswered = answeredStats(queries, e.TargetLatencyPercentile)
	throughputOf(s.Scenario, res, samples)
	inferredTokensOf(s, res)
	judgeRecorded(res, s, e, samples, queries, rec.Samples)
	return res, nil
}

// recordedLatencies sorts the samples' latencies and, spq at a time, their
// queries' (a query is done when its last sample is).
func recordedLatencies(in []TokenSample, spq int) (samples, queries stats.Latencies, failed int64, err error) {
	ds := make([]time.Duration, len(in))
	for i, s := range in {
		switch {
		case s.Failed:
			ds[i] = stats.FailedLatency
			failed++
		case s.LatencyNs < 0 || s.FirstTokenNs < 0:
			return samples, queries, 0, fmt.Errorf("%w: sample %d: negative latency %d or first-token latency %d", ErrInvalidRecord, i, s.LatencyNs, s.FirstTokenNs)
		default:
			ds[i] = time.Duration(s.LatencyNs)
		}
	}
	if spq <= 1 {
		samples, err = stats.NewLatencies(ds)
		return samples, samples, failed, err
	}
	if len(ds)%spq != 0 {
		return samples, queries, 0, fmt.Errorf("%w: %d samples are not whole queries of %d", ErrInvalidRecord, len(ds), spq)
	}
	qs := make([]time.Duration, 0, len(ds)/spq)
	for i := 0; i < len(ds); i += spq {
		qs = append(qs, slices.Max(ds[i:i+spq]))
	}
	if samples, err = stats.NewLatencies(ds); err == nil {
		queries, err = stats.NewLatencies(qs)
	}
	return samples, queries, failed, err
}

// judgeRecorded applies LoadGen's validity to a recorded run, as
// Run.result does to a live one.
func judgeRecorded(res *Result, s Settings, e trace.Effective, samples, queries stats.Latencies, rec []TokenSample) {
	var reasons, recs []string
	invalid := func(why, rec string) { reasons, recs = append(reasons, why), append(recs, rec) }
	res.HasPerfConstraints = s.Scenario == trace.Server
	res.PerfConstraintsMet = true
	var tl *TokenLatencies
	if s.UseTokenLatencies {
		tl = judgeTokenLatencies(tokenRunOf(s, res, queries), rec)
		res.TokenLatencies = tl
		tokenPerfConstraints(res, tl, invalid)
	} else if s.Scenario == trace.Server {
		p := e.TargetLatencyPercentile
		if at, _ := res.SampleLatency.At(p); at > time.Duration(e.TargetLatencyNs) {
			res.PerfConstraintsMet = false
			invalid(fmt.Sprintf("%s percentile latency %s exceeds the bound %d ns", pctName(p), nsString(at), e.TargetLatencyNs), recPerfServer)
		}
	}
	minimums(res, s, e, "", invalid)
	res.EarlyStoppingMet = true
	switch {
	case tl != nil:
		tokenEarlyStopping(res, tl, invalid)
	case s.Ruleset == RulesetLoadGen6 && s.Scenario != trace.Offline:
		es := earlyStoppingOf(s.Scenario, e.TargetLatencyPercentile, time.Duration(e.TargetLatencyNs), samples, queries, res.QueriesIssued)
		res.EarlyStopping, res.EarlyStoppingMet = es, es.Met
		if !es.Met {
			invalid("early stopping not met: "+esReason(es.Text), recEarlyStopping)
		}
	}
	res.NoFailedSamples = res.SamplesFailed == 0
	if !res.NoFailedSamples {
		invalid(fmt.Sprintf("%d samples failed", res.SamplesFailed), recFailed)
	}
	res.Valid = res.MinDurationMet && res.MinQueriesMet && res.PerfConstraintsMet && res.EarlyStoppingMet && res.NoFailedSamples
	res.Validity = "INVALID"
	if res.Valid {
		res.Validity = "VALID"
	}
	res.InvalidReasons, res.Recommendations = reasons, recs
	res.NonCompliant = s.compliance(e)
	res.CompliantLength = len(res.NonCompliant) == 0
	metricOf(s, e.TargetLatencyPercentile, false, int(e.SamplesPerQuery), res)
}

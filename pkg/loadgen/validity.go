package loadgen

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// reportedPercentiles are the percentiles LoadGen's logs list.
var reportedPercentiles = []float64{0.50, 0.90, 0.95, 0.97, 0.99, 0.999}

// LoadGen's recommendations (results.cc), used where it has one.
const (
	recMinDurationSS      = "Decrease the expected latency so the loadgen pre-generates more queries."
	recMinDurationServer  = "Increase the target QPS so the loadgen pre-generates more queries."
	recMinDurationOffline = "Increase expected QPS so the loadgen pre-generates a larger (coalesced) query."
	recMinQueries         = "The test exited early, before enough queries were issued. See the detailed log for why this may have occurred."
	recPerfServer         = "Reduce target QPS to improve latency."
	recPerfMultiStreamV05 = "Reduce samples per query."
	recFailed             = "Fix the failing requests (see failures): a failed sample counts as over the latency bound and is never a success."
	recEarlyStopping      = "Run more queries (raise min_query_count or min_duration) or improve tail latency so early stopping can pass."
)

// netloadgen's advice in place of the rate and latency advice when
// failures, not latency, made the run INVALID (failureAdvice).
const (
	recFailedLatency = "Fix the failing requests first (see failures): they alone put the run over the latency bound; the answered samples are within it."
	recFailedEarly   = "Fix the failing requests (see failures): the run was stopped once they made it INVALID, so it fell short of its minimums."
)

// result computes the run's Result from its records. It runs after close,
// when no completion can write any more.
func (r *Run) result(reason StopReason, drainTimedOut bool, unanswered int64, wall time.Time, end time.Time) *Result {
	s, e := r.settings, r.tr.Settings
	issued := r.queriesIssued()
	res := &Result{
		Ruleset: s.Ruleset, Scenario: s.Scenario.String(), Mode: s.Mode.String(), SUTName: r.sutName, Task: s.Task,
		Requested: s, Effective: effectiveOf(e),
		QSLTotalSampleCount: r.qsl.TotalSampleCount(), QSLPerformanceSampleCount: r.qsl.PerformanceSampleCount(),
		LoadedSet: r.tr.LoadedSet, GeneratedQueryCount: r.n, GeneratedSamplesPerQuery: r.spq,
		GeneratedQueryDurationNs: int64(r.tr.Duration),
		StartTime:                wall, DurationNs: int64(end.Sub(r.startTime)),
		EndReason: reason, EndMessage: r.endMessage(reason), DrainTimedOut: drainTimedOut, Unanswered: unanswered,
		QueriesIssued: issued, QueriesCompleted: r.queriesDone(), SamplesIssued: r.samplesIssued(),
		SamplesFailed: r.failedS.Load(), ProtocolErrors: r.protocolErrs.Load(), LateCompletions: r.lateCompletions.Load(),
		FinalQueryAllSamplesDoneTimeNs: r.lastDoneNs(),
	}
	res.EndTime = wall.Add(time.Duration(res.DurationNs))
	if r.shardSet {
		res.Shard = &Shard{Index: r.shardK, Of: r.shardN}
	}
	res.SamplesCompleted = res.SamplesIssued - res.SamplesFailed
	r.errMu.Lock()
	res.Errors = slices.Clone(r.errs)
	res.Failures = r.failures.sorted()
	r.errMu.Unlock()
	if issued > 0 {
		res.FinalQueryScheduledTimeNs, res.FinalQueryIssuedTimeNs, _ = r.times.last()
	}
	if s.Scenario == trace.Server {
		res.TargetQPS = s.ServerTargetQPS
	}

	samples := r.samples.Latencies()
	queries := samples
	if r.spq != 1 {
		// With one sample per query a query's latency is its sample's:
		// the same sort, not another.
		queries = r.queries.Latencies()
	}
	res.SampleLatency = latencyStats(samples, e.TargetLatencyPercentile)
	res.QueryLatency = latencyStats(queries, e.TargetLatencyPercentile)
	res.SampleLatencyAnswered = answeredStats(samples, e.TargetLatencyPercentile)
	res.QueryLatencyAnswered = answeredStats(queries, e.TargetLatencyPercentile)
	// Read from the issue log in place, as the latencies are from the
	// record: no per-query copy at the end (issue 28).
	lateness := func(yield func(time.Duration) bool) {
		r.times.each(func(_ int, sched, at int64) bool { return yield(time.Duration(max(at-sched, 0))) })
	}
	if l, err := stats.LatenciesOf(r.times.len(), lateness); err == nil {
		res.IssueLateness = latencyStats(l, 0)
	}
	if g := generatorBound(res.IssueLateness, r.bound); g != nil {
		res.GeneratorBound, res.Warnings = g, append(res.Warnings, g.Warning())
	}
	if s.Scenario == trace.Server {
		// latency > server_target_latency_ns, even when it is 0 (token
		// latencies judge by TTFT and TPOT instead), as LoadGen counts.
		res.OverLatencyCount = int64(samples.CountOver(r.bound))
	}
	r.throughput(res, samples)
	inferredTokensOf(s, res)

	var reasons, recs []string
	fa := r.failureAdvice(res, samples, reason)
	invalid := func(why, rec string) {
		reasons = append(reasons, why)
		recs = append(recs, fa.advise(rec))
	}
	earlyEnd := ""
	if reason != StopCompleted {
		earlyEnd = " (" + r.endMessage(reason) + ")"
	}

	res.HasPerfConstraints = s.Scenario == trace.Server || r.interval > 0
	res.PerfConstraintsMet = true
	var tl *TokenLatencies
	if s.UseTokenLatencies {
		tl = judgeTokenLatencies(tokenRunOf(s, res, queries), r.tokenSamples())
		res.TokenLatencies = tl
	}
	switch {
	case tl != nil:
		tokenPerfConstraints(res, tl, invalid)
	case s.Scenario == trace.Server:
		p := e.TargetLatencyPercentile
		at, _ := res.SampleLatency.At(p)
		if samples.Len() > 0 && at > r.bound {
			res.PerfConstraintsMet = false
			invalid(fmt.Sprintf("%s percentile latency %s exceeds the bound %d ns%s", pctName(p), nsString(at), r.bound, fa.note()), recPerfServer)
		}
	case r.interval > 0:
		res.MultiStreamV05 = r.tickAccounting()
		if !res.MultiStreamV05.Met {
			res.PerfConstraintsMet = false
			m := res.MultiStreamV05
			invalid(fmt.Sprintf("%d of %d queries skipped at least one interval; more than %.4g%% may not (query intervals at the %s percentile = %d, must be < 2)",
				m.QueriesWithSkips, issued, 100*(1-m.Percentile), pctName(m.Percentile), m.IntervalsAtPercentile), recPerfMultiStreamV05)
		}
	}
	if v := r.verdict; v.Stopped {
		ev := v
		if ev.AllowedOverPercentile == math.MaxInt64 {
			ev.AllowedOverPercentile = -1
		}
		if ev.AllowedOverEarlyStopping == math.MaxInt64 {
			ev.AllowedOverEarlyStopping = -1
		}
		res.EarlyVerdict = &ev
		if v.OverLatency > r.allowedPerf && res.PerfConstraintsMet {
			res.PerfConstraintsMet = false
			invalid("early verdict: "+v.Reason, recPerfServer)
		}
	}

	minimums(res, s, e, earlyEnd, invalid)

	res.EarlyStoppingMet = true
	switch {
	case tl != nil:
		tokenEarlyStopping(res, tl, invalid)
	case s.Ruleset == RulesetLoadGen6 && s.Scenario != trace.Offline:
		es := r.earlyStopping(samples, queries, issued)
		res.EarlyStopping = es
		res.EarlyStoppingMet = es.Met
		if !es.Met {
			invalid("early stopping not met: "+esReason(es.Text), recEarlyStopping)
		}
	}

	res.NoFailedSamples = res.SamplesFailed == 0
	if !res.NoFailedSamples {
		first := ""
		if len(res.Errors) > 0 {
			first = " (first: " + res.Errors[0] + ")"
		}
		invalid(fmt.Sprintf("%d samples failed%s", res.SamplesFailed, first), recFailed)
	}

	res.Valid = res.MinDurationMet && res.MinQueriesMet && res.PerfConstraintsMet && res.EarlyStoppingMet && res.NoFailedSamples
	res.Validity = "INVALID"
	if res.Valid {
		res.Validity = "VALID"
	}
	res.InvalidReasons, res.Recommendations = reasons, recs
	res.NonCompliant = s.compliance(e)
	res.CompliantLength = len(res.NonCompliant) == 0
	r.metric(res)
	if r.settings.Engine.Concurrency > 0 {
		r.closedLoop(res)
	}
	return res
}

// minimums judges min duration and min queries (results.cc MinDurationMet,
// MinQueriesMet, MinSamplesMet).
func minimums(res *Result, s Settings, e trace.Effective, earlyEnd string, invalid func(why, rec string)) {
	switch s.Scenario {
	case trace.Offline:
		if s.Ruleset == RulesetV05 {
			res.MinDurationMet = res.SampleLatency.MaxNs > int64(e.MinDurationMs)*1e6
		} else {
			res.MinDurationMet = res.SampleLatency.MaxNs >= int64(e.MinDurationMs)*1e6
		}
	case trace.Server:
		if s.Ruleset == RulesetV05 {
			res.MinDurationMet = res.FinalQueryIssuedTimeNs >= int64(e.MinDurationMs)*1e6
		} else {
			res.MinDurationMet = res.FinalQueryScheduledTimeNs >= int64(e.MinDurationMs)*1e6
		}
	default:
		res.MinDurationMet = res.FinalQueryIssuedTimeNs >= int64(e.MinDurationMs)*1e6
	}
	if !res.MinDurationMet {
		rec := recMinDurationSS
		switch s.Scenario {
		case trace.Server:
			rec = recMinDurationServer
		case trace.Offline:
			rec = recMinDurationOffline
		}
		invalid(fmt.Sprintf("min duration %d ms not met%s", e.MinDurationMs, earlyEnd), rec)
	}
	issued := res.QueriesIssued
	res.MinQueriesMet = uint64(issued) >= e.MinQueryCount && uint64(res.SamplesIssued) >= e.MinSampleCount
	if !res.MinQueriesMet {
		invalid(fmt.Sprintf("%d queries (%d samples) issued, fewer than min_query_count %d (min_sample_count %d)%s",
			issued, res.SamplesIssued, e.MinQueryCount, e.MinSampleCount, earlyEnd), recMinQueries)
	}
}

// esReason is an early-stopping text as one reason.
func esReason(text string) string {
	return strings.ReplaceAll(strings.TrimPrefix(text, " * "), "\n * ", "; ")
}

// tokenPerfConstraints is LoadGen's Server constraint with token
// latencies: the TTFT and TPOT percentiles against their bounds, in place
// of the latency percentile (results.cc PerfConstraintsMet).
func tokenPerfConstraints(res *Result, tl *TokenLatencies, invalid func(why, rec string)) {
	if res.Scenario != trace.Server.String() {
		return
	}
	pct := pctName(tl.Percentile)
	if !tl.TTFTMet {
		res.PerfConstraintsMet = false
		invalid(fmt.Sprintf("%s percentile TTFT %s exceeds the bound %d ns", pct, nsString(time.Duration(tl.TTFTAtPercentileNs)), tl.TTFTBoundNs), RecTTFTNotMet)
	}
	if !tl.TPOTMet {
		res.PerfConstraintsMet = false
		invalid(fmt.Sprintf("%s percentile TPOT %s exceeds the bound %d ns", pct, nsString(time.Duration(tl.TPOTAtPercentileNs)), tl.TPOTBoundNs), RecTPOTNotMet)
	}
}

// tokenEarlyStopping takes the token early-stopping verdict (TPOT, then
// TTFT) as the run's.
func tokenEarlyStopping(res *Result, tl *TokenLatencies, invalid func(why, rec string)) {
	res.EarlyStoppingMet = tl.EarlyStoppingMet
	for _, es := range []struct {
		name string
		r    *EarlyStoppingResult
	}{{"TPOT", tl.TPOTEarlyStopping}, {"TTFT", tl.TTFTEarlyStopping}} {
		if es.r != nil && !es.r.Met {
			invalid(es.name+" early stopping not met: "+esReason(es.r.Text), recEarlyStopping)
		}
	}
}

// closedLoop turns a closed-loop run's result into what it is: a
// throughput and latencies at a concurrency, with no MLPerf verdict. The
// criteria stay as measured (facts about the run), but none of them makes
// it VALID or INVALID, and LoadGen's advice does not apply.
func (r *Run) closedLoop(res *Result) {
	c := &ClosedLoop{Concurrency: r.settings.Engine.Concurrency, MaxOutstanding: r.maxOutstanding.Load()}
	if ns := res.FinalQueryAllSamplesDoneTimeNs; ns > 0 {
		c.CompletedSamplesPerSec = float64(res.SamplesCompleted) / (float64(ns) / 1e9)
	}
	res.ClosedLoop = c
	res.Valid, res.Validity = false, ValidityNA
	res.InvalidReasons, res.Recommendations, res.EarlyStopping = nil, nil, nil
	res.Metric = Metric{Name: fmt.Sprintf("Completed samples per second (closed loop, %d outstanding)", c.Concurrency),
		Value: c.CompletedSamplesPerSec, Unit: "samples/s"}
}

// throughput fills LoadGen's per-scenario rates (results.cc LogSummary):
// n is the sample count and times are seconds from the start.
func (r *Run) throughput(res *Result, samples stats.Latencies) {
	throughputOf(r.settings.Scenario, res, samples)
}

func throughputOf(sc trace.Scenario, res *Result, samples stats.Latencies) {
	n := float64(res.SamplesIssued)
	rate := func(num float64, ns int64) float64 {
		if ns <= 0 {
			return 0
		}
		return num / (float64(ns) / 1e9)
	}
	switch sc {
	case trace.Server:
		// LoadGen's (n−1)/final done counts every sample, for in LoadGen
		// every sample completes; here a failed sample did not, and a run
		// whose every answer failed completed nothing per second.
		res.CompletedSamplesPerSec = rate(float64(max(res.SamplesCompleted-1, 0)), res.FinalQueryAllSamplesDoneTimeNs)
		res.ScheduledSamplesPerSec = rate(n-1, res.FinalQueryScheduledTimeNs)
	case trace.SingleStream:
		res.QPSWithLoadgenOverhead = rate(n-1, res.FinalQueryIssuedTimeNs)
		if res.SampleLatency.MeanNs > 0 && res.SampleLatency.MeanNs != int64(stats.FailedLatency) {
			res.QPSWithoutLoadgenOverhead = 1e9 / float64(res.SampleLatency.MeanNs)
		}
	case trace.Offline:
		if samples.Len() > 0 && res.SampleLatency.MaxNs != int64(stats.FailedLatency) {
			res.SamplesPerSecond = rate(n, res.SampleLatency.MaxNs)
		}
	}
}

func (r *Run) metric(res *Result) {
	metricOf(r.settings, r.tr.Settings.TargetLatencyPercentile, r.interval > 0, r.spq, res)
}

// metricOf sets the scenario's headline number; ticks: v0.5 MultiStream.
func metricOf(s Settings, p float64, ticks bool, spq int, res *Result) {
	switch {
	case s.Scenario == trace.Server:
		res.Metric = Metric{Name: "Completed samples per second", Value: res.CompletedSamplesPerSec, Unit: "samples/s"}
	case s.Scenario == trace.Offline:
		res.Metric = Metric{Name: "Samples per second", Value: res.SamplesPerSecond, Unit: "samples/s"}
	case ticks:
		res.Metric = Metric{Name: "Samples per query", Value: float64(spq), Unit: "samples/query"}
	default:
		st := res.SampleLatency
		if s.Scenario == trace.MultiStream {
			st = res.QueryLatency
		}
		v, _ := st.At(p)
		res.Metric = Metric{Name: pctName(p) + " percentile latency (ns)", Value: float64(v), Unit: "ns"}
		if res.EarlyStopping != nil && res.EarlyStopping.Met {
			res.Metric = Metric{Name: "Early stopping " + pctName(p) + " percentile estimate (ns)", Value: float64(res.EarlyStopping.EstimateNs), Unit: "ns"}
		}
	}
}

// earlyStopping is LoadGen 6.0's EarlyStopping (results.cc; §5).
func (r *Run) earlyStopping(samples, queries stats.Latencies, issued int64) *EarlyStoppingResult {
	return earlyStoppingOf(r.settings.Scenario, r.tr.Settings.TargetLatencyPercentile, r.bound, samples, queries, issued)
}

// earlyStoppingOf is LoadGen 6.0's EarlyStopping for the scenario sc at
// percentile p (Server: t = samples over bound).
func earlyStoppingOf(sc trace.Scenario, p float64, bound time.Duration, samples, queries stats.Latencies, issued int64) *EarlyStoppingResult {
	f, err := stats.NewMinPassingFinder(p, stats.EarlyStoppingConfidence)
	if err != nil {
		return &EarlyStoppingResult{Text: err.Error()}
	}
	if sc == trace.Server {
		return serverEarlyStoppingResult(f.Server(issued, int64(samples.CountOver(bound))), p)
	}
	l := samples
	if sc == trace.MultiStream {
		l = queries
	}
	return estimateEarlyStopping(sc, p, func(f *stats.MinPassingFinder) stats.PercentileEstimate { return f.EstimatePercentile(l) })
}

// estimateEarlyStopping is LoadGen's SingleStream and MultiStream early
// stopping (results.cc EarlyStopping): est gives a finder's estimate over
// the values judged; SingleStream adds their p99 estimate.
func estimateEarlyStopping(sc trace.Scenario, p float64, est func(*stats.MinPassingFinder) stats.PercentileEstimate) *EarlyStoppingResult {
	f, err := stats.NewMinPassingFinder(p, stats.EarlyStoppingConfidence)
	if err != nil {
		return &EarlyStoppingResult{Text: err.Error()}
	}
	e := est(f)
	es := &EarlyStoppingResult{Met: e.Met, Queries: e.Queries, MinQueries: e.MinQueries, Percentile: p}
	if !e.Met {
		es.Text = fmt.Sprintf(" * Only processed %d queries.\n * Need to process at least %d queries for early stopping.", e.Queries, e.MinQueries)
		return es
	}
	es.Discarded, es.EstimateNs = e.Discarded, int64(e.Latency)
	es.Text = fmt.Sprintf(" * Processed at least %d queries (%d).\n * Would discard %d highest latency queries.\n * Early stopping %s percentile estimate: %d",
		e.MinQueries, e.Queries, e.Discarded, pctName(p), es.EstimateNs)
	if sc == trace.SingleStream {
		if f99, err := stats.NewMinPassingFinder(0.99, stats.EarlyStoppingConfidence); err == nil {
			e99 := est(f99)
			if e99.Met {
				es.EstimateP99Ns = int64(e99.Latency)
				es.Text += fmt.Sprintf("\n * Early stopping 99.0th percentile estimate: %d", es.EstimateP99Ns)
			} else {
				es.Text += fmt.Sprintf("\n * Not enough queries processed for 99.0th percentile\n early stopping estimate (would need to process at\n least %d total queries).", e99.MinQueries)
			}
		}
	}
	return es
}

// serverEarlyStoppingFailText is LoadGen's text for a Server run that
// fails early stopping.
func serverEarlyStoppingFailText(issued, more int64) string {
	return fmt.Sprintf(" * Run unsuccessful.\n * Processed %d queries.\n * Would need to run at least %d more queries,\n with the run being successful if every additional\n query were under latency.", issued, more)
}

// tickAccounting applies v0.5's skipped-interval rule (v0.5 loadgen.cc
// 770-792, 964-969): query i is charged the ticks its successor advanced;
// the last query is charged ceil(latency/interval). The run fails if the
// sorted charges at the target percentile are ≥ 2.
func (r *Run) tickAccounting() *MultiStreamTicks {
	issued := int(r.queriesIssued())
	p := r.tr.Settings.TargetLatencyPercentile
	m := &MultiStreamTicks{IntervalNs: int64(r.interval), Percentile: p, Met: true}
	if issued == 0 {
		return m
	}
	charge := make([]int64, issued)
	for i := 0; i < issued; i++ {
		adv := int64(r.ticks[i])
		m.SkippedIntervals += adv - 1
		m.MaxTicksAdvanced = max(m.MaxTicksAdvanced, adv)
		if i > 0 {
			charge[i-1] = adv
		}
	}
	last := issued - 1
	lastSched, _, _ := r.times.last()
	lastLat := r.queryDone[last].Load() - lastSched
	if r.queryFail[last].Load() || !r.answered(last) {
		lastLat = math.MaxInt64
	}
	iv := int64(r.interval)
	charge[last] = max(1, lastLat/iv+min(1, lastLat%iv))
	m.OvertimeQueries = m.SkippedIntervals
	for _, c := range charge {
		if c >= 2 {
			m.QueriesWithSkips++
		}
	}
	slices.Sort(charge)
	idx := min(int(float64(issued)*p), issued-1)
	m.IntervalsAtPercentile = charge[idx]
	m.Met = m.IntervalsAtPercentile < 2
	return m
}

func latencyStats(l stats.Latencies, target float64) LatencyStats {
	st := LatencyStats{Count: l.Len(), Failed: l.Failed()}
	sum, err := l.Summary()
	if err != nil {
		return st
	}
	st.MinNs, st.MaxNs, st.MeanNs = int64(sum.Min), int64(sum.Max), int64(sum.Mean)
	ps := reportedPercentiles
	if target > 0 && !slices.Contains(ps, target) {
		ps = append(slices.Clone(ps), target)
		slices.Sort(ps)
	}
	// All at once: over a run's record, a few scans for all of them. A
	// target outside [0, 1] has no percentile and is left out.
	ps = slices.DeleteFunc(slices.Clone(ps), func(p float64) bool { return !(p >= 0 && p <= 1) })
	vs, err := l.Percentiles(ps)
	if err != nil {
		return st
	}
	for i, p := range ps {
		st.Percentiles = append(st.Percentiles, Percentile{P: p, LatencyNs: int64(vs[i])})
	}
	return st
}

// answeredStats is latencyStats over the answered samples of l only, with
// Failed the samples left out; nil for no samples. The answered ones are
// the sorted record's first Len − Failed values (a failed sample sorts
// last): no second sort.
func answeredStats(l stats.Latencies, target float64) *LatencyStats {
	if l.Len() == 0 {
		return nil
	}
	st := latencyStats(l.Completed(), target)
	st.Failed = l.Failed()
	return &st
}

// pctName formats a percentile as LoadGen's labels do: 0.9 → "90.0th".
func pctName(p float64) string { return fmt.Sprintf("%.1fth", p*100) }

func nsString(d time.Duration) string {
	if d == stats.FailedLatency {
		return "(a failed sample)"
	}
	return fmt.Sprintf("%d ns", int64(d))
}

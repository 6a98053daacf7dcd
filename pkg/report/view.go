package report

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// palette colours the runs, in order (Okabe–Ito, told apart with colour
// blindness too); a ninth run reuses the first.
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999933"}

func colorOf(i int) string { return palette[i%len(palette)] }

// runView is one run's part of the page.
type runView struct {
	Name, Color string
	Result      *loadgen.Result
	// Verdict is result.json's validity as shown, VerdictClass its style:
	// a closed loop's N/A says why it has no MLPerf verdict.
	Verdict, VerdictClass string
	// Kind is the scenario, or the closed loop that stands in its place.
	Kind     string
	Figures  []figure
	Failures []loadgen.Failure
	// FailedNoBreakdown: samples failed but result.json has no failures
	// breakdown (written before it was kept).
	FailedNoBreakdown bool
	Search            *searchView
	Lateness          latenessView
	// Breakdown is where the time went (runlog.Breakdown), "" when the
	// server said nothing that tells; StatsNote why its statistics are
	// missing ("not offered", a failed read).
	Breakdown, StatsNote string
	Notes                []string
	// Stages and Models are a shaped run's parts (result.json's stages[]
	// and models[]).
	Stages, Models []partRow
	// Sessions is a run with multi-turn sessions' figures (result.json's
	// sessions), nil otherwise.
	Sessions *sessionsView
}

// latenessView is a run's issue lateness in ms, and the generator-bound
// warning's share of the bound when it was raised.
type latenessView struct {
	P50, P99, Max, Bound string
}

// figure is one number of result.json as shown: Text rounded for reading,
// Exact the value as result.json has it (data-value), Key its path there.
type figure struct {
	Key, Label, Text, Exact, Unit string
}

type searchView struct {
	*search.Result
	Trials []trialView
	// Sweep: a load sweep, judged trial by trial, with no peak to find.
	Sweep bool
	// Latencies: the trials carry p50, p90 and p99 (the latency-vs-load
	// table's columns).
	Latencies bool
}

type trialView struct {
	search.Trial
	Target, Achieved, Tail, Bound string
	// TailValue is the tail latency's data-value: the answered samples'
	// when some failed (never a failed sample's INT64_MAX).
	TailValue float64
	// Lat are the latencies shown, the answered samples' when some
	// failed; P50, P90, P99 them in ms as shown ("-" in a record without
	// them), with the failures counted beside p99.
	Lat           *search.Percentiles
	P50, P90, P99 string
}

func newRunView(i int, r *Run) runView {
	v := runView{Name: r.Name, Color: colorOf(i), Result: r.Result, Notes: r.Notes}
	if res := r.Result; res != nil {
		v.Figures = figuresOf(res)
		v.Verdict, v.VerdictClass, v.Kind = res.Validity, res.Validity, res.Scenario
		if cl := res.ClosedLoop; cl != nil {
			// Not an MLPerf scenario: no VALID or INVALID to show, and
			// SingleStream is only where its samples come from.
			v.Verdict = fmt.Sprintf("%s (closed loop, concurrency %d)", res.Validity, cl.Concurrency)
			v.VerdictClass = "NA"
			v.Kind = fmt.Sprintf("closed loop, concurrency %d (not an MLPerf scenario; %s's samples)", cl.Concurrency, res.Scenario)
		}
		if res.LoadShape != nil {
			shapeView(&v, res)
		}
		v.Sessions = sessionsOf(res.Sessions)
		v.Failures = res.Failures
		v.FailedNoBreakdown = res.SamplesFailed > 0 && len(res.Failures) == 0
		v.Lateness = latenessOf(res)
		v.Breakdown = runlog.Breakdown(res)
		if res.Server != nil && res.Server.Statistics != nil && !res.Server.Statistics.Offered {
			v.StatsNote = res.Server.Statistics.Note
		}
	}
	if r.Search != nil {
		v.Search = newSearchView(r.Search)
	}
	return v
}

// figuresOf lists the headline numbers of res, each tied to its key.
func figuresOf(res *loadgen.Result) []figure {
	f := []figure{
		{Key: "metric.value", Label: res.Metric.Name, Text: fmtFloat(res.Metric.Value, 2), Exact: exactF(res.Metric.Value), Unit: res.Metric.Unit},
	}
	if res.Metric.Unit == "ns" {
		f[0].Text = fmtFloat(res.Metric.Value, 0) // a latency: whole ns
	}
	if res.Metric.Value != res.CompletedSamplesPerSec && (res.CompletedSamplesPerSec > 0 || res.Effective.Scenario == "Server") {
		f = append(f, figure{Key: "result_completed_samples_per_sec", Label: "completed samples/s",
			Text: fmtFloat(res.CompletedSamplesPerSec, 2), Exact: exactF(res.CompletedSamplesPerSec), Unit: "samples/s"})
	}
	if res.TargetQPS > 0 {
		f = append(f, figure{Key: "target_qps", Label: "target QPS", Text: fmtFloat(res.TargetQPS, 2), Exact: exactF(res.TargetQPS), Unit: "queries/s"})
	}
	f = append(f,
		countFigure("samples_issued", "samples issued", res.SamplesIssued),
		countFigure("samples_completed", "samples completed", res.SamplesCompleted),
		countFigure("samples_failed", "samples failed", res.SamplesFailed),
		figure{Key: "duration_ns", Label: "duration", Text: fmtFloat(float64(res.DurationNs)/1e9, 3), Exact: strconv.FormatInt(res.DurationNs, 10), Unit: "s"},
	)
	if b := res.Effective.TargetLatencyNs; b > 0 {
		f = append(f, nsFigure("effective_settings.effective_target_latency_ns", "latency bound", int64(b)))
		f = append(f, countFigure("result_overlatency_query_count", "samples over the bound", res.OverLatencyCount))
	}
	if cl := res.ClosedLoop; cl != nil {
		f = append(f, countFigure("closed_loop.concurrency", "outstanding (closed loop)", int64(cl.Concurrency)),
			countFigure("closed_loop.max_outstanding", "most outstanding seen", int64(cl.MaxOutstanding)))
	}
	if a := res.SampleLatencyAnswered; a != nil && res.SamplesFailed > 0 {
		// A failed sample's latency is LoadGen's INT64_MAX: show the
		// answered samples' percentiles, the failures counted beside.
		f = append(f, latencyFigures("sample_latency_answered", fmt.Sprintf("latency (answered; %d failed)", res.SamplesFailed), *a)...)
	} else {
		f = append(f, latencyFigures("sample_latency", "latency", res.SampleLatency)...)
	}
	if res.ClosedLoop == nil { // a closed loop has no schedule to be late for
		f = append(f, latencyFigures("issue_lateness", "issue lateness", res.IssueLateness)...)
	}
	return append(f, statisticsFigures(res)...)
}

// statisticsFigures are server.statistics' means per request, when the
// extension was offered.
func statisticsFigures(res *loadgen.Result) []figure {
	if res.Server == nil || res.Server.Statistics == nil || !res.Server.Statistics.Offered {
		return nil
	}
	st := res.Server.Statistics
	const key = "server.statistics."
	ns := func(name, label string, v float64) figure {
		return figure{Key: key + name, Label: label, Text: fmtFloat(v/1e6, 3), Exact: exactF(v), Unit: "ms"}
	}
	return []figure{
		{Key: key + "requests", Label: "server: requests (statistics)", Text: strconv.FormatUint(st.Requests, 10), Exact: strconv.FormatUint(st.Requests, 10)},
		ns("request_ns", "server: request time, mean", st.RequestNs),
		ns("queue_ns", "server: queue, mean", st.QueueNs),
		ns("compute_input_ns", "server: compute input, mean", st.ComputeInputNs),
		ns("compute_infer_ns", "server: compute infer, mean", st.ComputeInferNs),
		ns("compute_output_ns", "server: compute output, mean", st.ComputeOutputNs),
		ns("client_overhead_ns", "network and client, mean", st.ClientOverheadNs),
		{Key: key + "mean_batch_size", Label: "server: mean batch size", Text: fmtFloat(st.MeanBatchSize, 2), Exact: exactF(st.MeanBatchSize)},
	}
}

// latencyFigures are p50, p90, p99, p99.9 and the maximum of s.
func latencyFigures(key, label string, s loadgen.LatencyStats) []figure {
	var f []figure
	for _, p := range []float64{0.5, 0.9, 0.99, 0.999} {
		if d, ok := s.At(p); ok {
			name := "p" + strconv.FormatFloat(p*100, 'f', -1, 64)
			f = append(f, nsFigure(key+"."+name, label+" "+name, int64(d)))
		}
	}
	if s.Count > 0 {
		f = append(f, nsFigure(key+".max_ns", label+" max", s.MaxNs))
	}
	return f
}

func latenessOf(res *loadgen.Result) latenessView {
	l := latenessView{P50: "-", P99: "-", Max: "-", Bound: "no"}
	if res.ClosedLoop != nil {
		l.Bound = "n/a: a closed loop has no schedule to be late for"
		return l
	}
	at := func(p float64) string {
		if d, ok := res.IssueLateness.At(p); ok {
			return fmtFloat(ms(int64(d)), 3)
		}
		return "-"
	}
	l.P50, l.P99 = at(0.5), at(0.99)
	if res.IssueLateness.Count > 0 {
		l.Max = fmtFloat(ms(res.IssueLateness.MaxNs), 3)
	}
	if g := res.GeneratorBound; g != nil {
		l.Bound = fmt.Sprintf("yes: p99 %.3f ms is %.0f%% of the %s ms bound", ms(g.LatenessP99Ns), 100*g.Share, fmtNum(ms(g.BoundNs)))
	}
	return l
}

func countFigure(key, label string, n int64) figure {
	s := strconv.FormatInt(n, 10)
	return figure{Key: key, Label: label, Text: s, Exact: s}
}

// nsFigure shows a duration in ms to the µs; a percentile that fell on a
// failed sample (stats.FailedLatency, the largest int64) says "failed".
func nsFigure(key, label string, ns int64) figure {
	f := figure{Key: key, Label: label, Text: fmtFloat(float64(ns)/1e6, 3), Exact: strconv.FormatInt(ns, 10), Unit: "ms"}
	if ns == math.MaxInt64 {
		f.Text = "failed"
	}
	return f
}

func exactF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func fmtFloat(v float64, dec int) string { return strconv.FormatFloat(v, 'f', dec, 64) }

func newSearchView(s *search.Result) *searchView {
	v := &searchView{Result: s, Sweep: s.Mode == search.ModeSweep}
	for _, t := range s.Trials {
		tv := trialView{Trial: t, Target: fmtNum(t.Target), Achieved: fmtFloat(t.Achieved, 1), Bound: "-",
			P50: "-", P90: "-", P99: "-"}
		tv.TailValue, tv.Tail = trialTail(t)
		if t.LatencyBoundMs > 0 {
			tv.Bound = fmtNum(t.LatencyBoundMs)
		}
		tv.Lat = t.Latency
		if t.FailedSamples > 0 && t.LatencyAnswered != nil {
			tv.Lat = t.LatencyAnswered
		}
		if l := tv.Lat; l != nil {
			v.Latencies = true
			tv.P50, tv.P90, tv.P99 = trialMs(l.P50), trialMs(l.P90), trialMs(l.P99)+failedNote(t)
		}
		v.Trials = append(v.Trials, tv)
	}
	return v
}

// trialTail is a trial's tail latency in ms, as a value (NaN: none) and as
// shown: the answered samples' with the failures beside it when some
// failed, "failed" for an older record's failed sample.
func trialTail(t search.Trial) (float64, string) {
	switch {
	case t.FailedSamples > 0 && t.TailLatencyAnsweredMs != nil:
		return *t.TailLatencyAnsweredMs, fmtFloat(*t.TailLatencyAnsweredMs, 3) + failedNote(t)
	case t.FailedSamples > 0:
		return math.NaN(), "-" + failedNote(t)
	case t.TailLatencyMs >= failedMs:
		return math.NaN(), "failed"
	}
	return t.TailLatencyMs, fmtFloat(t.TailLatencyMs, 3)
}

// failedNote is " (N failed)" beside a trial's answered latency, "" when
// none failed.
func failedNote(t search.Trial) string {
	if t.FailedSamples == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d failed)", t.FailedSamples)
}

// trialMs is a trial's latency in ms to the µs, "failed" where the
// percentile fell on a failed sample.
func trialMs(v float64) string {
	if v == search.FailedPercentile {
		return "failed"
	}
	return fmtFloat(v, 3)
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// pctLabel is "p99" for 0.99.
func pctLabel(p float64) string { return "p" + strconv.FormatFloat(p*100, 'g', 6, 64) }

// verdictOf is the run's verdict line: VALID or INVALID, or a search's
// outcome when it has no result.json (no peak found, or a sweep).
func verdictOf(v runView) string {
	switch {
	case v.Result != nil:
		return v.Verdict
	case v.Search != nil && v.Search.Sweep:
		return fmt.Sprintf("sweep of %d rates", len(v.Search.Trials))
	case v.Search != nil && v.Search.Found:
		return fmt.Sprintf("peak %s %s", fmtNum(v.Search.Peak), v.Search.Unit)
	case v.Search != nil:
		return "no peak found"
	}
	return ""
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

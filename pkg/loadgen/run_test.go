package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
	"github.com/netloadgen/netloadgen/pkg/trace/tracetest"
)

func testSettings(t *testing.T, r Ruleset, sc trace.Scenario) Settings {
	t.Helper()
	s := DefaultSettings(r)
	s.Scenario = sc
	s.QSLRNGSeed, s.SampleIndexRNGSeed, s.ScheduleRNGSeed = 2085463073848966840, 2747215439041700203, 16159082839903944936
	s.MinDurationMs = 200
	s.MinQueryCount = 50
	s.ServerTargetQPS = 1000
	s.ServerTargetLatencyNs = 10_000_000
	s.OfflineExpectedQPS = 500
	s.MultiStreamSamplesPerQuery = 4
	s.MultiStreamTargetQPS = 20 // v0.5: 50 ms ticks
	s.Engine.DrainTimeoutMs = 5_000
	return s
}

func execute(t *testing.T, s Settings, sut *fakeSUT, opts ...Option) (*Run, *Result) {
	t.Helper()
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, append([]Option{WithClock(sut.clock), quiet}, opts...)...)
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return r, res
}

var quiet = WithLogger(slog.New(slog.DiscardHandler))

func constLatency(d time.Duration) func(int) time.Duration {
	return func(int) time.Duration { return d }
}

// Every scenario issues the trace's queries, in order, with the trace's
// sample indices, and records every sample.
func TestIssuesExactlyTheTrace(t *testing.T) {
	cases := []struct {
		name    string
		ruleset Ruleset
		sc      trace.Scenario
		advance bool
		batch   int
	}{
		{"SingleStream", RulesetLoadGen6, trace.SingleStream, true, 0},
		{"MultiStream loadgen6", RulesetLoadGen6, trace.MultiStream, true, 0},
		{"MultiStream v0.5", RulesetV05, trace.MultiStream, true, 0},
		{"Server", RulesetLoadGen6, trace.Server, false, 0},
		{"Offline", RulesetLoadGen6, trace.Offline, true, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newFakeClock()
			// 5 ms: MultiStream's trace (8 ms expected latency) lasts
			// past min_duration; faster, it would run out of queries.
			sut := &fakeSUT{clock: clk, latency: constLatency(5 * time.Millisecond), advance: c.advance, batch: c.batch}
			r, res := execute(t, testSettings(t, c.ruleset, c.sc), sut)
			got := sut.issued()
			tr := r.Trace()
			if int64(len(got)) != res.QueriesIssued || len(got) == 0 {
				t.Fatalf("SUT saw %d queries, result says %d", len(got), res.QueriesIssued)
			}
			qs := tracetest.Collect(tr)
			for i, q := range got {
				if q.ID != i || q.FirstSample != i*tr.SamplesPerQuery {
					t.Fatalf("query %d: ID %d FirstSample %d", i, q.ID, q.FirstSample)
				}
				if want := qs[i].Samples; !slices.Equal(q.Samples, want) {
					t.Fatalf("query %d samples %v, trace has %v", i, q.Samples, want)
				}
			}
			if c.sc == trace.Server && len(got) != tr.Len() {
				t.Errorf("Server issued %d of %d generated queries", len(got), tr.Len())
			}
			if c.sc == trace.Offline && (len(got) != 1 || len(got[0].Samples) != tr.SamplesPerQuery) {
				t.Errorf("Offline issued %d queries", len(got))
			}
			if res.SamplesCompleted != res.SamplesIssued || res.SamplesFailed != 0 || res.ProtocolErrors != 0 {
				t.Errorf("completed %d of %d samples, %d failed, %d protocol errors", res.SamplesCompleted, res.SamplesIssued, res.SamplesFailed, res.ProtocolErrors)
			}
			if res.EndReason != StopCompleted {
				t.Errorf("end reason %s", res.EndReason)
			}
		})
	}
}

// SingleStream stops at LoadGen's natural end: the first issue at or after
// min_duration once min_query_count queries are out, and each query is
// scheduled when the previous one completed.
func TestSingleStreamNaturalEnd(t *testing.T) {
	clk := newFakeClock()
	sut := &fakeSUT{clock: clk, latency: constLatency(3 * time.Millisecond), advance: true}
	s := testSettings(t, RulesetV05, trace.SingleStream)
	_, res := execute(t, s, sut)
	got := sut.issued()
	start := got[0].Scheduled
	for i := 1; i < len(got); i++ {
		if d := got[i].Scheduled.Sub(got[i-1].Scheduled); d != 3*time.Millisecond {
			t.Fatalf("query %d scheduled %v after the previous one, want its 3ms latency", i, d)
		}
	}
	last := got[len(got)-1].Issued.Sub(start)
	prev := got[len(got)-2].Issued.Sub(start)
	if last < 200*time.Millisecond || prev >= 200*time.Millisecond {
		t.Errorf("last two issues at %v and %v; want the run to end at the first issue ≥ 200ms", prev, last)
	}
	if !res.Valid || !res.MinDurationMet || res.SampleLatency.MaxNs != int64(3*time.Millisecond) {
		t.Errorf("result %s, min duration %v, max latency %d; reasons %v", res.Validity, res.MinDurationMet, res.SampleLatency.MaxNs, res.InvalidReasons)
	}
}

// Server latency counts from the scheduled (ideal) time: a scheduler that
// wakes 500µs late adds 500µs to every latency and shows as issue lateness.
func TestServerLatencyFromScheduledTime(t *testing.T) {
	clk := newFakeClock()
	clk.late = 500 * time.Microsecond
	sut := &fakeSUT{clock: clk, latency: constLatency(2 * time.Millisecond)}
	r, res := execute(t, testSettings(t, RulesetV05, trace.Server), sut)
	qs := tracetest.Collect(r.Trace())
	for _, q := range sut.issued() {
		if want := clk.base.Add(qs[q.ID].Scheduled); !q.Scheduled.Equal(want) {
			t.Fatalf("query %d scheduled %v, trace says %v", q.ID, q.Scheduled, want)
		}
	}
	// Query 0 is due at the start, where the clock already is: no lateness.
	if res.SampleLatency.MaxNs != int64(2500*time.Microsecond) || res.IssueLateness.MaxNs != int64(500*time.Microsecond) {
		t.Errorf("max latency %d, max lateness %d; want 2.5ms and 0.5ms", res.SampleLatency.MaxNs, res.IssueLateness.MaxNs)
	}
}

// A Server SUT that never answers still gets every scheduled query; the
// drain deadline then ends the run with every sample failed.
func TestServerNeverWaitsForResponses(t *testing.T) {
	clk := newFakeClock()
	sut := &fakeSUT{clock: clk, silent: true}
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Engine.DrainTimeoutMs = 30
	r, res := execute(t, s, sut)
	if n := len(sut.issued()); n != r.Trace().Len() {
		t.Fatalf("issued %d of %d scheduled queries", n, r.Trace().Len())
	}
	if !res.DrainTimedOut || res.Unanswered != res.SamplesIssued || res.SamplesFailed != res.SamplesIssued {
		t.Errorf("drain timed out %v, unanswered %d, failed %d of %d", res.DrainTimedOut, res.Unanswered, res.SamplesFailed, res.SamplesIssued)
	}
	if res.Valid || res.NoFailedSamples || res.OverLatencyCount != res.SamplesIssued {
		t.Errorf("validity %s, over latency %d; reasons %v", res.Validity, res.OverLatencyCount, res.InvalidReasons)
	}
	// The queries the drain counted failed are no longer in flight (issue
	// 17 #14: a status showed them both in flight and failed).
	if p := r.Progress(); p.InFlightQueries != 0 || p.FailedSamples != res.SamplesIssued {
		t.Errorf("after the drain: %d in flight, %d failed; want 0 in flight, %d failed", p.InFlightQueries, p.FailedSamples, res.SamplesIssued)
	}
}

// v0.5 MultiStream: a query due while its predecessor is outstanding moves
// to the first tick after it completes, and the predecessor is charged.
func TestMultiStreamV05TickSkipping(t *testing.T) {
	cases := []struct {
		name      string
		slow      []int // queries that take 120 ms (2 ticks skipped each)
		p         float64
		wantValid bool
	}{
		{"one slow query at p90", []int{3}, 0.90, true},
		{"three slow queries at p90", []int{3, 8, 12}, 0.90, false},
		{"one slow query at p99", []int{3}, 0.99, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newFakeClock()
			lat := func(id int) time.Duration {
				if slices.Contains(c.slow, id) {
					return 120 * time.Millisecond
				}
				return 10 * time.Millisecond
			}
			sut := &fakeSUT{clock: clk, latency: lat, advance: true}
			s := testSettings(t, RulesetV05, trace.MultiStream)
			s.MinDurationMs, s.MinQueryCount, s.MultiStreamTargetLatencyPercentile = 1000, 20, c.p
			_, res := execute(t, s, sut)
			got := sut.issued()
			// Query 3 is due on tick 4 (200 ms) and done at 320 ms: query 4
			// goes on tick 7 (350 ms), not 5.
			if d := got[4].Scheduled.Sub(clk.base); d != 350*time.Millisecond {
				t.Errorf("query 4 scheduled at %v, want 350ms", d)
			}
			m := res.MultiStreamV05
			if m == nil || m.QueriesWithSkips != int64(len(c.slow)) || m.SkippedIntervals != int64(2*len(c.slow)) || m.MaxTicksAdvanced != 3 {
				t.Fatalf("tick accounting %+v", m)
			}
			if res.QueriesIssued != 20 || res.Valid != c.wantValid || res.PerfConstraintsMet != c.wantValid {
				t.Errorf("%d queries, %s; reasons %v", res.QueriesIssued, res.Validity, res.InvalidReasons)
			}
			if !c.wantValid && !slices.Contains(res.Recommendations, recPerfMultiStreamV05) {
				t.Errorf("recommendations %v", res.Recommendations)
			}
		})
	}
}

func TestValidityVerdicts(t *testing.T) {
	over := func(every int) func(int) time.Duration {
		return func(id int) time.Duration {
			if id%every == every-1 {
				return 20 * time.Millisecond
			}
			return time.Millisecond
		}
	}
	cases := []struct {
		name       string
		ruleset    Ruleset
		sc         trace.Scenario
		edit       func(*Settings)
		sut        func(*fakeClock) *fakeSUT
		wantValid  bool
		wantReason string
		wantRec    string
	}{
		{name: "Server VALID", ruleset: RulesetV05, sc: trace.Server,
			sut:       func(c *fakeClock) *fakeSUT { return &fakeSUT{clock: c, latency: constLatency(time.Millisecond)} },
			wantValid: true},
		{name: "Server INVALID latency", ruleset: RulesetV05, sc: trace.Server,
			sut:        func(c *fakeClock) *fakeSUT { return &fakeSUT{clock: c, latency: over(20)} },
			wantReason: "exceeds the bound", wantRec: recPerfServer},
		{name: "Server INVALID too few queries", ruleset: RulesetV05, sc: trace.Server,
			edit:       func(s *Settings) { s.MaxQueryCount = 20 },
			sut:        func(c *fakeClock) *fakeSUT { return &fakeSUT{clock: c, latency: constLatency(time.Millisecond)} },
			wantReason: "fewer than min_query_count", wantRec: recMinQueries},
		{name: "Server INVALID failed sample", ruleset: RulesetV05, sc: trace.Server,
			sut: func(c *fakeClock) *fakeSUT {
				return &fakeSUT{clock: c, latency: constLatency(time.Millisecond), fail: func(id int) error {
					if id == 7 {
						return errors.New("HTTP 503")
					}
					return nil
				}}
			},
			wantReason: "1 samples failed (first: query 7 samples [0, 1): HTTP 503)", wantRec: recFailed},
		{name: "Server loadgen6 early stopping fails", ruleset: RulesetLoadGen6, sc: trace.Server,
			sut:        func(c *fakeClock) *fakeSUT { return &fakeSUT{clock: c, latency: constLatency(time.Millisecond)} },
			wantReason: "early stopping not met", wantRec: recEarlyStopping},
		{name: "Server loadgen6 VALID", ruleset: RulesetLoadGen6, sc: trace.Server,
			edit:      func(s *Settings) { s.MinDurationMs = 600 },
			sut:       func(c *fakeClock) *fakeSUT { return &fakeSUT{clock: c, latency: constLatency(time.Millisecond)} },
			wantValid: true},
		{name: "SingleStream loadgen6 too few for early stopping", ruleset: RulesetLoadGen6, sc: trace.SingleStream,
			edit: func(s *Settings) { s.MinDurationMs, s.SingleStreamExpectedLatencyNs = 50, 5e6 },
			sut: func(c *fakeClock) *fakeSUT {
				return &fakeSUT{clock: c, latency: constLatency(5 * time.Millisecond), advance: true}
			},
			wantReason: "Only processed", wantRec: recEarlyStopping},
		{name: "MultiStream loadgen6 runs out of generated queries", ruleset: RulesetLoadGen6, sc: trace.MultiStream,
			sut: func(c *fakeClock) *fakeSUT {
				return &fakeSUT{clock: c, latency: constLatency(time.Millisecond), advance: true}
			},
			wantReason: "Ran out of generated queries", wantRec: recMinDurationSS},
		{name: "Offline VALID", ruleset: RulesetLoadGen6, sc: trace.Offline,
			sut:       func(c *fakeClock) *fakeSUT { return &fakeSUT{clock: c, latency: constLatency(time.Second), batch: 64} },
			wantValid: true},
		{name: "Offline INVALID min duration", ruleset: RulesetLoadGen6, sc: trace.Offline,
			sut: func(c *fakeClock) *fakeSUT {
				return &fakeSUT{clock: c, latency: constLatency(time.Millisecond), batch: 64}
			},
			wantReason: "min duration 200 ms not met", wantRec: recMinDurationOffline},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testSettings(t, c.ruleset, c.sc)
			if c.edit != nil {
				c.edit(&s)
			}
			clk := newFakeClock()
			_, res := execute(t, s, c.sut(clk))
			if res.Valid != c.wantValid || (res.Validity == "VALID") != c.wantValid {
				t.Fatalf("validity %s, want valid=%v; reasons %v", res.Validity, c.wantValid, res.InvalidReasons)
			}
			if c.wantValid {
				if len(res.InvalidReasons) != 0 {
					t.Errorf("VALID with reasons %v", res.InvalidReasons)
				}
				return
			}
			if len(res.InvalidReasons) != len(res.Recommendations) {
				t.Errorf("%d reasons, %d recommendations", len(res.InvalidReasons), len(res.Recommendations))
			}
			i := slices.IndexFunc(res.InvalidReasons, func(r string) bool { return strings.Contains(r, c.wantReason) })
			if i < 0 {
				t.Fatalf("reasons %q lack %q", res.InvalidReasons, c.wantReason)
			}
			if res.Recommendations[i] != c.wantRec {
				t.Errorf("recommendation %q, want %q", res.Recommendations[i], c.wantRec)
			}
		})
	}
}

// Cancelling stops issuing; in-flight queries still complete and are kept.
func TestCancellation(t *testing.T) {
	for _, sc := range []trace.Scenario{trace.Server, trace.SingleStream} {
		t.Run(sc.String(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clk := newFakeClock()
			sut := &fakeSUT{clock: clk, latency: constLatency(time.Millisecond), advance: sc != trace.Server}
			sut.onIssue = func(q Query) {
				if q.ID == 9 {
					cancel()
				}
			}
			r, err := NewRun(testSettings(t, RulesetV05, sc), sut, &fakeQSL{total: 100, perf: 100}, WithClock(clk), quiet)
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Execute(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.EndReason != StopCancelled || res.QueriesIssued != 10 || res.QueriesCompleted != 10 || res.SamplesFailed != 0 {
				t.Errorf("reason %s, issued %d, completed %d, failed %d", res.EndReason, res.QueriesIssued, res.QueriesCompleted, res.SamplesFailed)
			}
			if res.Valid || res.MinQueriesMet {
				t.Errorf("a cancelled run is %s", res.Validity)
			}
			if _, err := r.Execute(ctx); !errors.Is(err, ErrAlreadyExecuted) {
				t.Errorf("second Execute: %v", err)
			}
		})
	}
}

// The early verdict stops a doomed run sooner with the verdict the full run
// reaches, and never stops a run that passes.
func TestEarlyVerdictMatchesFullRun(t *testing.T) {
	cases := []struct {
		name    string
		ruleset Ruleset
		latency func(int) time.Duration
		fail    func(int) error
	}{
		{"latency tail from query 100", RulesetV05, func(id int) time.Duration {
			if id >= 100 && id%5 == 0 {
				return 50 * time.Millisecond
			}
			return time.Millisecond
		}, nil},
		{"loadgen6 early stopping", RulesetLoadGen6, func(id int) time.Duration {
			if id%60 == 0 {
				return 50 * time.Millisecond
			}
			return time.Millisecond
		}, nil},
		{"failed sample", RulesetV05, constLatency(time.Millisecond), func(id int) error {
			if id == 30 {
				return errors.New("reset")
			}
			return nil
		}},
		{"passing run", RulesetV05, constLatency(time.Millisecond), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := testSettings(t, c.ruleset, trace.Server)
			s.MinDurationMs = 600
			full := func(early bool) *Result {
				s.Engine.EarlyVerdict = early
				_, res := execute(t, s, &fakeSUT{clock: newFakeClock(), latency: c.latency, fail: c.fail, inline: true})
				return res
			}
			whole, early := full(false), full(true)
			if whole.Valid != early.Valid {
				t.Fatalf("full run %s, early verdict run %s (%v)", whole.Validity, early.Validity, early.InvalidReasons)
			}
			if whole.Valid {
				if early.EarlyVerdict != nil || early.QueriesIssued != whole.QueriesIssued {
					t.Errorf("a passing run was stopped: %+v", early.EarlyVerdict)
				}
				return
			}
			if early.EarlyVerdict == nil || !early.EarlyVerdict.Stopped || early.EndReason != StopEarlyVerdict {
				t.Fatalf("not stopped early: %s %+v", early.EndReason, early.EarlyVerdict)
			}
			if early.QueriesIssued >= whole.QueriesIssued {
				t.Errorf("early run issued %d, full run %d", early.QueriesIssued, whole.QueriesIssued)
			}
		})
	}
}

// A SUT that completes a sample twice or names an unknown query is counted,
// never trusted and never panics the engine.
func TestProtocolErrorsAreCounted(t *testing.T) {
	clk := newFakeClock()
	s := testSettings(t, RulesetV05, trace.Server)
	sut := &doubleSUT{clock: clk}
	r, err := NewRun(s, sut, &fakeQSL{total: 100, perf: 100}, WithClock(clk), quiet)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.ProtocolErrors != 2*res.QueriesIssued || res.SamplesFailed != 0 || !res.Valid {
		t.Errorf("protocol errors %d for %d queries, failed %d, %s %v", res.ProtocolErrors, res.QueriesIssued, res.SamplesFailed, res.Validity, res.InvalidReasons)
	}
}

type doubleSUT struct{ clock *fakeClock }

func (d *doubleSUT) Name() string { return "double" }
func (d *doubleSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	c := q.Done(nil)
	c.At = q.Issued.Add(time.Millisecond)
	done(c)
	done(c)                                    // a second completion of the same sample
	done(Completion{Query: 1 << 30, Count: 1}) // a query that does not exist
}

func TestProgressDuringRun(t *testing.T) {
	clk := newFakeClock()
	var r *Run
	var seen Progress
	sut := &fakeSUT{clock: clk, latency: constLatency(time.Millisecond)}
	sut.onIssue = func(q Query) {
		if q.ID == 20 {
			seen = r.Progress()
		}
	}
	r, err := NewRun(testSettings(t, RulesetV05, trace.Server), sut, &fakeQSL{total: 100, perf: 100}, WithClock(clk), quiet)
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Progress(); p.Started || p.PlannedQueries != r.Trace().Len() {
		t.Errorf("before Execute: %+v", p)
	}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !seen.Started || seen.Finished || seen.IssuedQueries != 21 || seen.Elapsed != tracetest.Collect(r.Trace())[20].Scheduled {
		t.Errorf("progress at query 20: %+v", seen)
	}
	p := r.Progress()
	if !p.Finished || p.CompletedSamples != int64(r.Trace().Len()) || p.InFlightQueries != 0 {
		t.Errorf("after Execute: %+v", p)
	}
	// Every sample took 1 ms: the live percentiles say so, within the
	// histogram's 0.1 %.
	for _, v := range []time.Duration{p.P50, p.P90, p.P99} {
		if v < 999*time.Microsecond || v > 1001*time.Microsecond {
			t.Errorf("live percentiles %v %v %v, want 1ms", p.P50, p.P90, p.P99)
			break
		}
	}
}

func TestQSLLoadFailure(t *testing.T) {
	clk := newFakeClock()
	r, err := NewRun(testSettings(t, RulesetV05, trace.Server), &fakeSUT{clock: clk}, &fakeQSL{total: 10, perf: 10, err: errors.New("disk")}, WithClock(clk), quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(context.Background()); err == nil || !strings.Contains(err.Error(), "disk") {
		t.Errorf("Execute: %v", err)
	}
}

func TestResultMarshalsToJSON(t *testing.T) {
	clk := newFakeClock()
	_, res := execute(t, testSettings(t, RulesetLoadGen6, trace.Server), &fakeSUT{clock: clk, latency: constLatency(time.Millisecond)})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back["result_validity"] != res.Validity || back["ruleset"] != "loadgen6" || back["mode"] != "PerformanceOnly" {
		t.Errorf("round trip: validity %v ruleset %v mode %v", back["result_validity"], back["ruleset"], back["mode"])
	}
}

// A run stopped because the load generator shuts down (its context
// cancelled with ErrInterrupted as the cause) ends "interrupted", not
// "cancelled" (issue 17 #14); a plain cancel still ends "cancelled".
func TestInterruptedIsNotCancelled(t *testing.T) {
	for _, c := range []struct {
		cause error
		want  StopReason
	}{{nil, StopCancelled}, {ErrInterrupted, StopInterrupted}, {fmt.Errorf("shutting down: %w", ErrInterrupted), StopInterrupted}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		clk := newFakeClock()
		sut := &fakeSUT{clock: clk, latency: constLatency(time.Millisecond)}
		sut.onIssue = func(q Query) {
			if q.ID == 9 {
				cancel(c.cause)
			}
		}
		r, err := NewRun(testSettings(t, RulesetLoadGen6, trace.Server), sut, &fakeQSL{total: 100, perf: 100}, WithClock(clk), quiet)
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Execute(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.EndReason != c.want || res.EndMessage != c.want.message() || res.QueriesIssued != 10 {
			t.Errorf("cause %v: end reason %s (%q) after %d queries, want %s after 10", c.cause, res.EndReason, res.EndMessage, res.QueriesIssued, c.want)
		}
	}
}

// TestCompletedSamplesPerSecondCountsSuccesses: LoadGen's Server throughput
// is (samples − 1) / the last completion, and LoadGen has no failed sample;
// here a failed sample is not a completed one, so the figure counts the
// samples answered successfully, and a run whose every answer failed
// completed nothing per second.
func TestCompletedSamplesPerSecondCountsSuccesses(t *testing.T) {
	errBad := errors.New("bad answer")
	for _, c := range []struct {
		name  string
		every int // every every-th query fails; 1: all, 0: none
	}{{"none failed", 0}, {"a third failed", 3}, {"all failed", 1}} {
		t.Run(c.name, func(t *testing.T) {
			sut := &fakeSUT{clock: newFakeClock(), latency: constLatency(time.Millisecond), fail: func(id int) error {
				if c.every > 0 && id%c.every == 0 {
					return errBad
				}
				return nil
			}}
			_, res := execute(t, testSettings(t, RulesetLoadGen6, trace.Server), sut)
			if res.SamplesCompleted+res.SamplesFailed != res.SamplesIssued || (c.every > 0) != (res.SamplesFailed > 0) {
				t.Fatalf("%d completed, %d failed of %d", res.SamplesCompleted, res.SamplesFailed, res.SamplesIssued)
			}
			want := float64(max(res.SamplesCompleted-1, 0)) / (float64(res.FinalQueryAllSamplesDoneTimeNs) / 1e9)
			if math.Abs(res.CompletedSamplesPerSec-want) > 1e-9*want || res.Metric.Value != res.CompletedSamplesPerSec {
				t.Errorf("completed %.4f samples/s (metric %.4f), want %.4f: %d of %d samples answered by %d ns",
					res.CompletedSamplesPerSec, res.Metric.Value, want, res.SamplesCompleted, res.SamplesIssued, res.FinalQueryAllSamplesDoneTimeNs)
			}
			if c.every == 1 && res.CompletedSamplesPerSec != 0 {
				t.Errorf("every sample failed, yet %.2f completed samples per second", res.CompletedSamplesPerSec)
			}
			if res.ScheduledSamplesPerSec <= 0 {
				t.Errorf("scheduled %.2f samples/s: the schedule does not depend on the answers", res.ScheduledSamplesPerSec)
			}
		})
	}
}

// A run cut short because it was asked to be (a cancel: a search's early
// verdict on a trial, a user's cancel) logs its end at info level; a
// warning is for what went wrong (issue 18 #9).
func TestAskedEarlyEndIsNoWarning(t *testing.T) {
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	clk := newFakeClock()
	sut := &fakeSUT{clock: clk, latency: constLatency(time.Millisecond)}
	sut.onIssue = func(q Query) {
		if q.ID == 9 {
			cancel()
		}
	}
	r, err := NewRun(testSettings(t, RulesetLoadGen6, trace.Server), sut, &fakeQSL{total: 100, perf: 100}, WithClock(clk), WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.EndReason != StopCancelled || !strings.Contains(logged.String(), `level=INFO msg="run ended early" reason=cancelled`) ||
		strings.Contains(logged.String(), "level=WARN") {
		t.Errorf("end %s, log:\n%s", res.EndReason, logged.String())
	}
}

// When issue lateness is a material share of the Server bound, the result
// says the generator may be the bottleneck; a small lateness says nothing.
func TestGeneratorBoundWarning(t *testing.T) {
	for _, c := range []struct {
		late time.Duration
		want bool
	}{{2 * time.Millisecond, true}, {500 * time.Microsecond, false}} {
		clk := newFakeClock()
		clk.late = c.late // the bound is 10 ms
		_, res := execute(t, testSettings(t, RulesetV05, trace.Server), &fakeSUT{clock: clk, latency: constLatency(time.Millisecond)})
		g := res.GeneratorBound
		if (g != nil) != c.want || (len(res.Warnings) > 0) != c.want {
			t.Fatalf("lateness %v: generator_bound %+v, warnings %q; want warned=%v", c.late, g, res.Warnings, c.want)
		}
		if !c.want {
			continue
		}
		if g.LatenessP99Ns != int64(c.late) || g.BoundNs != 10_000_000 || g.Share != 0.2 {
			t.Errorf("generator_bound %+v, want p99 %d of bound 1e7, share 0.2", g, c.late)
		}
		if !strings.Contains(res.Warnings[0], "issue lateness p99 2.000 ms is 20% of the 10.000 ms latency bound") {
			t.Errorf("warning %q", res.Warnings[0])
		}
	}
}

package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// recorder is a RecordSink that keeps everything: the records a run's
// workers would have streamed.
type recorder struct {
	mu sync.Mutex
	records
}

// records are one run's issue and sample records.
type records struct {
	issues  [][4]int64 // shard, query, scheduled ns, issued ns
	samples []SampleRecord
}

func (r *recorder) QueryIssued(shard, q int, scheduledNs, issuedNs int64) {
	r.mu.Lock()
	r.issues = append(r.issues, [4]int64{int64(shard), int64(q), scheduledNs, issuedNs})
	r.mu.Unlock()
}

func (r *recorder) SampleDone(s SampleRecord) {
	r.mu.Lock()
	r.samples = append(r.samples, s)
	r.mu.Unlock()
}

var (
	errOverloaded = errors.New("HTTP 503: overloaded")
	errTimedOut   = errors.New("deadline exceeded")
)

func testClassifier(err error) (string, string) {
	switch {
	case errors.Is(err, errOverloaded):
		return "error", "HTTP 503"
	case errors.Is(err, errTimedOut):
		return "timeout", ""
	}
	return defaultClassifier(err)
}

// singleRun is a Server run on the fake SUT with varied latencies and two
// kinds of failure, and its records.
// silentSUT never answers the queries silent names (the others, its SUT does).
type silentSUT struct {
	SUT
	silent func(id int) bool
}

func (s silentSUT) IssueQuery(ctx context.Context, q Query, done func(Completion)) {
	if !s.silent(q.ID) {
		s.SUT.IssueQuery(ctx, q, done)
	}
}

// tokenSUT makes its SUT's answers generative: output and prompt tokens,
// the first token before the end, the count from the server for every
// other query, and inter-token gaps but for every fifth (a burst).
type tokenSUT struct{ SUT }

func (tokenSUT) Generative() bool { return true }

func (s tokenSUT) IssueQuery(ctx context.Context, q Query, done func(Completion)) {
	s.SUT.IssueQuery(ctx, q, func(c Completion) {
		c.Tokens, c.InputTokens, c.TokensFromServer = 2+q.ID%9, 100+q.ID, q.ID%2 == 0
		c.FirstToken = c.At.Add(-time.Duration(c.Tokens) * 100 * time.Microsecond)
		c.Gaps = make([]time.Duration, c.Tokens-1)
		for i := range c.Gaps {
			if q.ID%5 != 0 {
				c.Gaps[i] = 100 * time.Microsecond
			}
		}
		done(c)
	})
}

func silently(silent func(int) bool) func(SUT) SUT {
	return func(s SUT) SUT { return silentSUT{s, silent} }
}

func generative(s SUT) SUT { return tokenSUT{s} }

// singleRun is the run on the fake SUT with issuers issuers, each SUT
// wrapped by wrap when it is not nil.
func singleRun(t *testing.T, s Settings, issuers int, wrap ...func(SUT) SUT) (*Run, *Result, records) {
	closed := s.Scenario != trace.Server // the closed loops and Offline wait for answers: the SUT moves the clock
	t.Helper()
	clk := newFakeClock()
	var suts []SUT
	for range issuers {
		fake := &fakeSUT{clock: clk, advance: closed,
			latency: func(id int) time.Duration { return time.Duration(1+id%7) * time.Millisecond },
			fail: func(id int) error {
				switch {
				case id%13 == 3: // more often than the timeouts: kinds of equal count are ordered by which came first, which merging does not keep
					return errOverloaded
				case id%41 == 5:
					return errTimedOut
				}
				return nil
			}}
		var sut SUT = fake
		if len(wrap) > 0 && wrap[0] != nil {
			sut = wrap[0](sut)
		}
		suts = append(suts, sut)
	}
	s.Engine.Issuers = issuers
	rec := &recorder{}
	r, err := NewRun(s, suts[0], &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet, WithFailureClassifier(testClassifier),
		WithIssuerSUTs(suts[1:]...), WithRecordSink(rec))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r, res, rec.records
}

func endOf(res *Result) MergedEnd {
	end := MergedEnd{Reason: res.EndReason, DrainTimedOut: res.DrainTimedOut, SUTName: res.SUTName, Wall: res.StartTime,
		DurationNs: res.DurationNs, Resent: res.RequestsResent, Messages: res.Errors, Examples: res.Failures}
	if res.ClosedLoop != nil {
		end.MaxOutstanding = res.ClosedLoop.MaxOutstanding // what the workers would report
	}
	return end
}

// replay merges recs into m as n workers would deliver them: the shards'
// issues interleaved at random, each sample at a random moment after its
// query's issue, and now and then a bad record, which must be refused and
// change nothing. drop, when non-nil, withholds a record.
func replay(t *testing.T, m *Run, recs records, n int, rng *rand.Rand, drop func(issue bool, q int) bool) {
	t.Helper()
	server := m.Settings().Scenario == trace.Server // the trace's schedule is checked
	perShard := make([][][4]int64, n)
	for _, is := range recs.issues {
		perShard[is[0]] = append(perShard[is[0]], is)
	}
	type key struct{ shard, q int }
	byQuery := map[key][]SampleRecord{}
	spq := m.Trace().SamplesPerQuery
	for _, x := range recs.samples {
		k := key{(x.Seq / spq) % n, x.Seq / spq}
		if m.split {
			k.shard = x.Seq % n // Offline's one query, its samples split
		}
		byQuery[k] = append(byQuery[k], x)
	}
	var ready []SampleRecord
	mergeOne := func() {
		i := rng.IntN(len(ready))
		x := ready[i]
		ready[i] = ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		if err := m.MergeSample(x); err != nil {
			t.Fatalf("MergeSample(%+v): %v", x, err)
		}
		if rng.IntN(50) == 0 {
			if err := m.MergeSample(x); !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "recorded already") {
				t.Fatalf("a sample merged twice: %v", err)
			}
		}
	}
	for left := len(recs.issues); left > 0; {
		k := rng.IntN(n)
		if len(perShard[k]) == 0 {
			continue
		}
		is := perShard[k][0]
		perShard[k] = perShard[k][1:]
		left--
		q := int(is[1])
		if drop != nil && drop(true, q) {
			continue
		}
		if server && rng.IntN(40) == 0 {
			if err := m.MergeIssued(k, q, is[2]+1, is[3]); !errors.Is(err, ErrBadRecord) {
				t.Fatalf("a query of another schedule: %v", err)
			}
		}
		if err := m.MergeIssued(k, q, is[2], is[3]); err != nil {
			t.Fatalf("MergeIssued(%d, %v): %v", k, is, err)
		}
		if rng.IntN(40) == 0 {
			if err := m.MergeIssued(k, q, is[2], is[3]); !errors.Is(err, ErrBadRecord) {
				t.Fatalf("a query issued twice: %v", err)
			}
		}
		for _, x := range byQuery[key{k, q}] {
			if drop == nil || !drop(false, x.Seq) {
				ready = append(ready, x)
			}
		}
		for len(ready) > 0 && rng.IntN(2) == 0 {
			mergeOne()
		}
	}
	for len(ready) > 0 {
		mergeOne()
	}
}

func writeAll(t *testing.T, r *Run, res *Result) (list, samples []byte, tl [][3]int64) {
	t.Helper()
	var a, b bytes.Buffer
	if err := r.WriteSampleList(&a, res); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteSamples(&b); err != nil {
		t.Fatal(err)
	}
	r.Timeline().EachQuery(func(q int, s, i int64) bool {
		tl = append(tl, [3]int64{int64(q), s, i})
		return true
	})
	return a.Bytes(), b.Bytes(), tl
}

// A run rebuilt from its records, in 1 to 4 shards delivered in any order
// and among bad records, is the run: the same Result and the same files.
func TestMergedRunIsTheRun(t *testing.T) {
	server := testSettings(t, RulesetLoadGen6, trace.Server)
	offline := testSettings(t, RulesetLoadGen6, trace.Offline)
	concurrent := testSettings(t, RulesetLoadGen6, trace.SingleStream)
	concurrent.Engine.Concurrency = 8
	drained := server
	drained.Engine.DrainTimeoutMs = 20 // of real time: the silent queries' wait
	for _, tc := range []struct {
		name       string
		s          Settings
		n          int
		wrap       func(SUT) SUT
		unanswered bool
	}{
		{"Server", server, 1, nil, false}, {"Server", server, 3, nil, false}, {"Server", server, 4, nil, false},
		{"Offline", offline, 1, nil, false}, {"Offline", offline, 3, nil, false},
		{"concurrency", concurrent, 1, nil, false}, {"concurrency", concurrent, 2, nil, false},
		{"Server with unanswered queries", drained, 3, silently(func(id int) bool { return id%17 == 9 }), true},
		{"generative Server", server, 3, generative, false},
	} {
		s, n := tc.s, tc.n
		t.Run(fmt.Sprintf("%s in %d shards", tc.name, n), func(t *testing.T) {
			single, res, recs := singleRun(t, s, n, tc.wrap)
			if (s.Scenario == trace.Server && res.SamplesFailed == 0) || res.SamplesIssued < 50 {
				t.Fatalf("the single run should fail some of its %d samples: %d failed", res.SamplesIssued, res.SamplesFailed)
			}
			if (res.Unanswered != 0) != tc.unanswered {
				// A split Offline query's multi-sample completion once
				// completed its first sample only (completeShare).
				t.Fatalf("the single run left %d samples unanswered, ended %s", res.Unanswered, res.EndReason)
			}
			list, samples, tl := writeAll(t, single, res)
			m, err := NewMergedRun(single.Settings(), QSLCounts{1000, 256}, n, quiet, WithFailureClassifier(testClassifier))
			if err != nil {
				t.Fatal(err)
			}
			replay(t, m, recs, n, rand.New(rand.NewPCG(29, uint64(n))), nil)
			end := endOf(res)
			end.InterTokenGaps = single.InterTokenGaps() // what the workers would report, summed
			got := m.FinishMerged(end)
			if res.Tokens != nil && res.Tokens.ITL.Count == 0 {
				t.Error("a generative run without inter-token gaps: the test tests no ITL")
			}
			if !reflect.DeepEqual(got, res) {
				t.Errorf("merged result differs: %s", resultDiff(t, got, res))
			}
			gl, gs, gtl := writeAll(t, m, got)
			if !bytes.Equal(gl, list) {
				t.Errorf("samples.txt differs:\n got %.500s\nwant %.500s", gl, list)
			}
			if !bytes.Equal(gs, samples) {
				t.Errorf("--samples-out differs:\n got %.500s\nwant %.500s", gs, samples)
			}
			if !reflect.DeepEqual(gtl, tl) || !reflect.DeepEqual(m.Timeline().FailedBySecond, single.Timeline().FailedBySecond) {
				t.Errorf("timeline differs")
			}
			if again := m.FinishMerged(MergedEnd{}); again != got {
				t.Error("a second FinishMerged gave another result")
			}
			if err := m.MergeSample(recs.samples[0]); !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "finished") {
				t.Errorf("a record after the end: %v", err)
			}
		})
	}
}

// A worker lost mid-run: its records stop; the run is INVALID naming it and
// the samples it issued that no record answered, which fail unanswered.
func TestMergedRunLostWorker(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	const n, lostShard = 3, 2
	single, res, recs := singleRun(t, s, n)
	s = single.Settings()
	cut := len(recs.issues) / 2
	unaccounted := 0
	drop := func(issue bool, q int) bool {
		if q%n != lostShard || q < cut {
			return false
		}
		if q < cut+30 && !issue {
			unaccounted++ // issued, its answer in a chunk that never came
			return true
		}
		return q >= cut+30
	}
	m, err := NewMergedRun(s, QSLCounts{1000, 256}, n, quiet, WithFailureClassifier(testClassifier))
	if err != nil {
		t.Fatal(err)
	}
	replay(t, m, recs, n, rand.New(rand.NewPCG(29, 9)), drop)
	end := endOf(res)
	end.Lost = []LostWorker{{Name: "w-2", Shard: lostShard, AtNs: 120_000_000}}
	got := m.FinishMerged(end)
	want := fmt.Sprintf("worker w-2 lost at 0.1 s: %d samples unaccounted", unaccounted)
	if unaccounted == 0 || got.Valid || got.EndReason != StopWorkerLost || len(got.InvalidReasons) == 0 || got.InvalidReasons[0] != want {
		t.Fatalf("lost worker: valid %v, end %s, reasons %q; want INVALID, %s, first reason %q", got.Valid, got.EndReason, got.InvalidReasons, StopWorkerLost, want)
	}
	if !strings.Contains(got.EndMessage, want) || len(got.Recommendations) != len(got.InvalidReasons) {
		t.Errorf("end message %q, %d recommendations for %d reasons", got.EndMessage, len(got.Recommendations), len(got.InvalidReasons))
	}
	if got.Unanswered != res.Unanswered+int64(unaccounted) {
		t.Errorf("unanswered %d, want the run's %d and the lost worker's %d", got.Unanswered, res.Unanswered, unaccounted)
	}
}

// Bad records are refused with the field named, before anything changes.
func TestMergedRunRefusesBadRecords(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	m, err := NewMergedRun(s, QSLCounts{1000, 256}, 2, quiet)
	if err != nil {
		t.Fatal(err)
	}
	cur := m.Trace().Cursor()
	q0, _ := cur.Next()
	q1, _ := cur.Next()
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"shard out of range", m.MergeIssued(2, 2, 0, 0), "shard 2"},
		{"negative shard", m.MergeIssued(-1, 0, 0, 0), "shard -1"},
		{"another shard's query", m.MergeIssued(0, 1, int64(q1.Scheduled), 0), "query 1, want 0"},
		{"a query skipped", m.MergeIssued(1, 3, 0, 0), "query 3, want 1"},
		{"before the start", m.MergeIssued(0, 0, int64(q0.Scheduled), -5), "issued -5 ns: out of range"},
		{"not issued", m.MergeSample(SampleRecord{Seq: 0}), "not issued"},
		{"seq out of range", m.MergeSample(SampleRecord{Seq: 1 << 40}), "outside the trace"},
		{"negative seq", m.MergeSample(SampleRecord{Seq: -1}), "outside the trace"},
	} {
		if !errors.Is(tc.err, ErrBadRecord) || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrBadRecord saying %q", tc.name, tc.err, tc.want)
		}
	}
	if err := m.MergeIssued(0, 0, int64(q0.Scheduled), int64(q0.Scheduled)+10); err != nil {
		t.Fatalf("the first query, after refused ones: %v", err)
	}
	for _, tc := range []struct {
		rec  SampleRecord
		want string
	}{
		{SampleRecord{Seq: 0, LatencyNs: -1}, "latency_ns -1"},
		{SampleRecord{Seq: 0, LatencyNs: 1 << 62}, "latency_ns"},
		{SampleRecord{Seq: 0, LatencyNs: 5, Tokens: -3}, "tokens -3"},
		{SampleRecord{Seq: 0, LatencyNs: 5, Tokens: 3, FirstTokenNs: -1}, "first_token_ns -1"},
	} {
		if err := m.MergeSample(tc.rec); !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MergeSample(%+v): %v, want ErrBadRecord saying %q", tc.rec, err, tc.want)
		}
	}
	if err := m.MergeSample(SampleRecord{Seq: 0, LatencyNs: 5}); err != nil {
		t.Fatalf("a good sample after refused ones: %v", err)
	}
	if _, err := m.Execute(context.Background()); !errors.Is(err, ErrAlreadyExecuted) {
		t.Errorf("Execute of a merged run: %v", err)
	}
	if err := (&Run{}).MergeSample(SampleRecord{}); !errors.Is(err, ErrBadRecord) {
		t.Errorf("MergeSample on a run not merged: %v", err)
	}
}

func TestNewMergedRunRefusesWhatCannotBeSharded(t *testing.T) {
	for _, tc := range []struct {
		sc     trace.Scenario
		rs     Ruleset
		shards int
		want   string
	}{
		{trace.SingleStream, RulesetLoadGen6, 2, "one sequence of queries"},
		{trace.MultiStream, RulesetLoadGen6, 3, "one sequence of queries"},
		{trace.MultiStream, RulesetV05, 1, "ticks"},
		{trace.Server, RulesetLoadGen6, 0, "0 shards"},
	} {
		_, err := NewMergedRun(testSettings(t, tc.rs, tc.sc), QSLCounts{1000, 256}, tc.shards, quiet)
		if !errors.Is(err, trace.ErrInvalidSettings) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "workers") {
			t.Errorf("%s %s in %d shards: %v, want ErrInvalidSettings naming workers and saying %q", tc.rs, tc.sc, tc.shards, err, tc.want)
		}
	}
	if _, err := NewMergedRun(testSettings(t, RulesetLoadGen6, trace.SingleStream), QSLCounts{1000, 256}, 1, quiet); err != nil {
		t.Errorf("SingleStream in one shard: %v", err)
	}
}

// resultDiff names the lines of result.json that differ.
func resultDiff(t *testing.T, got, want *Result) string {
	t.Helper()
	g, err1 := json.MarshalIndent(got, "", " ")
	w, err2 := json.MarshalIndent(want, "", " ")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	gl, wl := strings.Split(string(g), "\n"), strings.Split(string(w), "\n")
	var out []string
	for i := 0; i < max(len(gl), len(wl)) && len(out) < 20; i++ {
		var a, b string
		if i < len(gl) {
			a = gl[i]
		}
		if i < len(wl) {
			b = wl[i]
		}
		if a != b {
			out = append(out, fmt.Sprintf("line %d: got %s, want %s", i, a, b))
		}
	}
	if len(out) == 0 {
		return "(equal as JSON: unexported or non-JSON fields differ)"
	}
	return strings.Join(out, "\n")
}

// TestMergedRunScrubsTheWorkersText: what workers report of their failures
// (messages, a kind's example) is kept scrubbed by the merged run's
// WithTextScrubber, as a local run keeps its server's text.
func TestMergedRunScrubsTheWorkersText(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	const n = 2
	single, res, recs := singleRun(t, s, n)
	if len(res.Failures) == 0 {
		t.Fatal("the single run has no failure kinds to carry an example")
	}
	scrub := func(text string) string { return strings.ReplaceAll(text, "s3cret", "<redacted>") }
	m, err := NewMergedRun(single.Settings(), QSLCounts{1000, 256}, n, quiet, WithFailureClassifier(testClassifier), WithTextScrubber(scrub))
	if err != nil {
		t.Fatal(err)
	}
	replay(t, m, recs, n, rand.New(rand.NewPCG(3, 4)), nil)
	end := endOf(res)
	end.Messages = []string{"HTTP 401: token s3cret refused"}
	end.Examples = slices.Clone(res.Failures)
	for i := range end.Examples {
		end.Examples[i].Example = "the server said s3cret"
	}
	got := m.FinishMerged(end)
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret") || !slices.Contains(got.Errors, "HTTP 401: token <redacted> refused") {
		t.Errorf("the merged result keeps a worker's text unscrubbed: errors %q, failures %+v", got.Errors, got.Failures)
	}
}

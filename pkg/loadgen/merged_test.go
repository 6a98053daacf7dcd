package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// recordingSUT wraps a SUT and keeps, as a worker's record sink would,
// every query's issue and every completed sample's outcome (times as the
// run's clock gave them; made relative to the start after the run).
type recordingSUT struct {
	SUT
	mu      sync.Mutex
	issues  []issuedQuery
	samples []rawSample
}

type rawSample struct {
	seq       int
	scheduled time.Time
	at        time.Time
	err       error
}

func (s *recordingSUT) IssueQuery(ctx context.Context, q Query, done func(Completion)) {
	s.mu.Lock()
	s.issues = append(s.issues, issuedQuery{ID: q.ID, FirstSample: q.FirstSample, Scheduled: q.Scheduled, Issued: q.Issued})
	s.mu.Unlock()
	s.SUT.IssueQuery(ctx, q, func(c Completion) {
		s.mu.Lock()
		for j := c.First; j < c.First+c.Count; j++ {
			s.samples = append(s.samples, rawSample{seq: q.FirstSample + j, scheduled: q.Scheduled, at: c.At, err: c.Err})
		}
		s.mu.Unlock()
		done(c)
	})
}

// records are one run's issue and sample records, as its workers would
// have streamed them.
type records struct {
	issues  [][3]int64 // query, scheduled ns, issued ns
	samples []SampleRecord
}

func (s *recordingSUT) records(start time.Time, kind func(error) string) records {
	var out records
	for _, q := range s.issues {
		out.issues = append(out.issues, [3]int64{int64(q.ID), int64(q.Scheduled.Sub(start)), int64(q.Issued.Sub(start))})
	}
	for _, x := range s.samples {
		rec := SampleRecord{Seq: x.seq, LatencyNs: max(int64(x.at.Sub(x.scheduled)), 0)}
		if x.err != nil {
			rec.Failed, rec.Kind = true, kind(x.err)
		}
		out.samples = append(out.samples, rec)
	}
	return out
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

func kindOf(err error) string {
	o, st := testClassifier(err)
	return strings.TrimSpace(o + " " + st)
}

// singleRun is a Server run on the fake SUT with varied latencies and two
// kinds of failure, and its records.
func singleRun(t *testing.T, s Settings) (*Run, *Result, records) {
	t.Helper()
	clk := newFakeClock()
	fake := &fakeSUT{clock: clk,
		latency: func(id int) time.Duration { return time.Duration(1+id%7) * time.Millisecond },
		fail: func(id int) error {
			switch {
			case id%29 == 3:
				return errOverloaded
			case id%41 == 5:
				return errTimedOut
			}
			return nil
		}}
	sut := &recordingSUT{SUT: fake}
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet, WithFailureClassifier(testClassifier))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r, res, sut.records(r.startTime, kindOf)
}

func endOf(res *Result) MergedEnd {
	return MergedEnd{Reason: res.EndReason, DrainTimedOut: res.DrainTimedOut, SUTName: res.SUTName, Wall: res.StartTime,
		DurationNs: res.DurationNs, Resent: res.RequestsResent, Messages: res.Errors, Examples: res.Failures}
}

// replay merges recs into m as n workers would deliver them: the shards'
// issues interleaved at random, each sample at a random moment after its
// query's issue, and now and then a bad record, which must be refused and
// change nothing. drop, when non-nil, withholds a record.
func replay(t *testing.T, m *Run, recs records, n int, rng *rand.Rand, drop func(issue bool, q int) bool) {
	t.Helper()
	perShard := make([][][3]int64, n)
	for _, is := range recs.issues {
		k := int(is[0]) % n
		perShard[k] = append(perShard[k], is)
	}
	bySeq := map[int][]SampleRecord{}
	for _, x := range recs.samples {
		bySeq[x.Seq] = append(bySeq[x.Seq], x)
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
		if drop != nil && drop(true, int(is[0])) {
			continue
		}
		if rng.IntN(40) == 0 {
			if err := m.MergeIssued(k, int(is[0]), is[1]+1, is[2]); !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "another trace") {
				t.Fatalf("a query of another schedule: %v", err)
			}
		}
		if err := m.MergeIssued(k, int(is[0]), is[1], is[2]); err != nil {
			t.Fatalf("MergeIssued(%d, %v): %v", k, is, err)
		}
		if rng.IntN(40) == 0 {
			if err := m.MergeIssued(k, int(is[0]), is[1], is[2]); !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "in trace order") {
				t.Fatalf("a query issued twice: %v", err)
			}
		}
		for _, x := range bySeq[int(is[0])] {
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
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	single, res, recs := singleRun(t, s)
	if res.SamplesFailed == 0 || res.SamplesIssued < 150 {
		t.Fatalf("the single run should fail some of its %d samples: %d failed", res.SamplesIssued, res.SamplesFailed)
	}
	list, samples, tl := writeAll(t, single, res)
	for _, n := range []int{1, 3, 4} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			m, err := NewMergedRun(s, QSLCounts{1000, 256}, n, quiet, WithFailureClassifier(testClassifier))
			if err != nil {
				t.Fatal(err)
			}
			replay(t, m, recs, n, rand.New(rand.NewPCG(29, uint64(n))), nil)
			got := m.FinishMerged(endOf(res))
			if !reflect.DeepEqual(got, res) {
				t.Errorf("merged result differs:\n got %+v\nwant %+v", got, res)
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
	_, res, recs := singleRun(t, s)
	const n, lostShard = 3, 2
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
		{"before the start", m.MergeIssued(0, 0, int64(q0.Scheduled), -5), "before the run's start"},
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
		{trace.Offline, RulesetLoadGen6, 2, "Offline"},
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

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// recordingSink keeps what a RecordSink is told.
type recordingSink struct {
	mu      sync.Mutex
	issued  [][4]int64 // shard, q, scheduled, issued
	samples []SampleRecord
}

func (s *recordingSink) QueryIssued(shard, q int, sched, issued int64) {
	s.mu.Lock()
	s.issued = append(s.issued, [4]int64{int64(shard), int64(q), sched, issued})
	s.mu.Unlock()
}

func (s *recordingSink) SampleDone(r SampleRecord) {
	s.mu.Lock()
	s.samples = append(s.samples, r)
	s.mu.Unlock()
}

// shardOf runs shard k of n of s alone, as a worker does.
func shardOf(t *testing.T, s Settings, k, n int, sut *shardSUT, opts ...Option) (*Run, *Result, *recordingSink) {
	t.Helper()
	sink := &recordingSink{}
	opts = append([]Option{WithClock(newFakeClock()), quiet, WithShard(k, n), WithRecordSink(sink)}, opts...)
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, opts...)
	if err != nil {
		t.Fatalf("NewRun (shard %d of %d): %v", k, n, err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatalf("Execute (shard %d of %d): %v", k, n, err)
	}
	return r, res, sink
}

// Three shards run apart (three workers) issue together exactly what one
// run issues, each only its own; each result counts its shard and says so;
// the sinks' records, merged, are the one run's record.
func TestShardsMakeTheRun(t *testing.T) {
	for _, sc := range []trace.Scenario{trace.Server, trace.Offline} {
		t.Run(sc.String(), func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, sc)
			whole, wholeRes, wholeSUTs := shardRun(t, s, 1, func(int) *shardSUT { return &shardSUT{latency: seqLatency} })
			want := issuedOf(whole, wholeSUTs)
			var wantLat []int64
			whole.Samples().Each(0, whole.Samples().Len(), func(_ int, d time.Duration) { wantLat = append(wantLat, int64(d)) })

			var got [][3]int64
			var merged []SampleRecord
			var issuedSum int64
			for k := range 3 {
				sut := &shardSUT{latency: seqLatency}
				r, res, sink := shardOf(t, s, k, 3, sut)
				for _, q := range sut.queries() {
					if sc == trace.Server && q.ID%3 != k {
						t.Errorf("shard %d was given query %d", k, q.ID)
					}
				}
				got = append(got, issuedOf(r, []*shardSUT{sut})...)
				if res.Shard == nil || res.Shard.Index != k || res.Shard.Of != 3 {
					t.Errorf("shard %d: result.shard %+v", k, res.Shard)
				}
				if res.SamplesIssued != int64(len(sink.samples)) || res.SamplesFailed != 0 {
					t.Errorf("shard %d: result counts %d issued, %d failed; the sink got %d samples", k, res.SamplesIssued, res.SamplesFailed, len(sink.samples))
				}
				issuedSum += res.SamplesIssued
				last := int64(-1)
				for _, e := range sink.issued {
					if e[0] != int64(k) || (sc == trace.Server && (e[1]%3 != int64(k) || e[1] <= last)) {
						t.Fatalf("shard %d: the sink was told %v after query %d", k, e, last)
					}
					last = e[1]
				}
				merged = append(merged, sink.samples...)
			}
			sort.Slice(got, func(i, j int) bool { return got[i][0] < got[j][0] })
			if !slices.Equal(got, want) {
				t.Errorf("the shards issued other samples than the whole run (%d vs %d)", len(got), len(want))
			}
			if issuedSum != wholeRes.SamplesIssued {
				t.Errorf("the shards issued %d samples, the whole run %d", issuedSum, wholeRes.SamplesIssued)
			}
			sort.Slice(merged, func(i, j int) bool { return merged[i].Seq < merged[j].Seq })
			var gotLat []int64
			for i, m := range merged {
				if m.Seq != i || m.Failed {
					t.Fatalf("merged record entry %d: %+v", i, m)
				}
				gotLat = append(gotLat, m.LatencyNs)
			}
			if !slices.Equal(gotLat, wantLat) {
				t.Errorf("the merged sinks' latencies differ from the whole run's record")
			}
		})
	}
}

// The sink is told of failures with their kind, and of samples never
// answered by the drain's end, once each.
func TestRecordSinkFailuresAndUnanswered(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Engine.DrainTimeoutMs = 20
	sut := &shardSUT{latency: seqLatency, fail: func(id int) error {
		if id%10 == 1 {
			return errors.New("HTTP 500")
		}
		return nil
	}}
	_, res, sink := shardOf(t, s, 0, 1, &shardSUT{latency: seqLatency, silent: true})
	if res.Unanswered == 0 || int64(len(sink.samples)) != res.SamplesIssued {
		t.Fatalf("silent SUT: %d unanswered, sink got %d of %d", res.Unanswered, len(sink.samples), res.SamplesIssued)
	}
	for _, m := range sink.samples {
		if !m.Failed || m.Kind != "unanswered" {
			t.Fatalf("silent SUT: sink got %+v", m)
		}
	}
	_, res, sink = shardOf(t, s, 0, 1, sut)
	failed := 0
	seen := map[int]bool{}
	for _, m := range sink.samples {
		if seen[m.Seq] {
			t.Fatalf("sample %d told twice", m.Seq)
		}
		seen[m.Seq] = true
		if m.Failed {
			failed++
			if m.Seq%10 != 1 || m.Kind != "other" {
				t.Errorf("failed sample %+v", m)
			}
		}
	}
	if int64(failed) != res.SamplesFailed || failed == 0 || int64(len(seen)) != res.SamplesIssued {
		t.Errorf("sink: %d failed of %d; result %d failed of %d", failed, len(seen), res.SamplesFailed, res.SamplesIssued)
	}
}

func TestShardRefusals(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	for _, tc := range []struct {
		k, n, issuers int
		want          string
	}{{3, 3, 1, "shard"}, {-1, 2, 1, "shard"}, {0, 0, 1, "shard"}, {0, 2, 2, "issuers"}} {
		s.Engine.Issuers = tc.issuers
		var others []SUT
		if tc.issuers == 2 {
			others = append(others, &shardSUT{})
		}
		_, err := NewRun(s, &shardSUT{}, &fakeQSL{total: 10, perf: 10}, WithShard(tc.k, tc.n), WithIssuerSUTs(others...))
		if !errors.Is(err, trace.ErrInvalidSettings) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("shard %d of %d with %d issuers: %v, want a refusal naming %s", tc.k, tc.n, tc.issuers, err, tc.want)
		}
	}
}

// WithStartAt: the run starts at the given time, not when ready, and every
// query is scheduled from it; a start already passed is refused with how
// late it is.
func TestStartAt(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	clock := newFakeClock()
	at := clock.Now().Add(1500 * time.Millisecond)
	sut := &shardSUT{latency: seqLatency}
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clock), quiet, WithStartAt(at))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	cur := r.Trace().Cursor()
	for _, q := range sut.queries() {
		tq, _ := cur.Next()
		if want := at.Add(tq.Scheduled); !q.Scheduled.Equal(want) {
			t.Fatalf("query %d scheduled at %v, want the start plus %v", q.ID, q.Scheduled.Sub(at), tq.Scheduled)
		}
	}
	if !r.startTime.Equal(at) {
		t.Errorf("run started at %v after the asked start", r.startTime.Sub(at))
	}

	clock = newFakeClock()
	r, err = NewRun(s, &shardSUT{latency: seqLatency}, &fakeQSL{total: 1000, perf: 256}, WithClock(clock), quiet, WithStartAt(clock.Now().Add(-5*time.Millisecond)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(context.Background()); !errors.Is(err, ErrStartPassed) || !strings.Contains(err.Error(), "by 5ms") {
		t.Errorf("a start 5 ms ago: %v, want ErrStartPassed saying by 5ms", err)
	}
}

// nullSink is a RecordSink that keeps nothing.
type nullSink struct{}

func (nullSink) QueryIssued(int, int, int64, int64) {}
func (nullSink) SampleDone(SampleRecord)            {}

// A run with a record sink allocates nothing per query: a run of 40,000
// queries allocates no more than one of 2,000, give or take the run's
// fixed allocations.
func TestRecordSinkDoesNotAllocate(t *testing.T) {
	allocs := func(n int) uint64 {
		s := DefaultSettings(RulesetLoadGen6)
		s.Scenario, s.ServerTargetQPS, s.MinDurationMs, s.MinQueryCount = trace.Server, 100_000, 1, uint64(n)
		r, err := NewRun(s, nullSUT{}, &fakeQSL{total: 1024, perf: 1024}, WithClock(newFakeClock()), WithRecordSink(nullSink{}),
			WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		r.n = n
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if _, err := r.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.Mallocs - m0.Mallocs
	}
	small, large := allocs(2_000), allocs(40_000)
	if large > small+500 {
		t.Errorf("%d allocations for 40,000 queries, %d for 2,000: %s per query", large, small, fmt.Sprint(float64(large-small)/38_000))
	}
}

// hostileShareSUT answers its share of a split Offline query as a broken
// server would: every sample twice, plus ranges past its share, before the
// start, of another query, and with the wrong number of response bodies.
type hostileShareSUT struct{ shardSUT }

func (s *hostileShareSUT) IssueQuery(ctx context.Context, q Query, done func(Completion)) {
	s.shardSUT.IssueQuery(ctx, q, done)
	n := len(q.Samples)
	done(q.DoneRange(0, n, nil)) // all again: each a protocol error
	for _, c := range []Completion{
		q.DoneRange(n, 1, nil), q.DoneRange(-1, 1, nil), q.DoneRange(0, 0, nil), q.DoneRange(0, n+1, nil),
		{Query: 1, First: 0, Count: 1}, {Query: 0, First: 0, Count: 2, Data: [][]byte{{1}}},
	} {
		done(c)
	}
}

// A split Offline query's completions are checked against the issuer's
// share: duplicates and ranges that are not its own are protocol errors,
// counted, and change no sample.
func TestSplitOfflineHostileCompletions(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Offline)
	_, want, _ := shardRun(t, s, 1, func(int) *shardSUT { return &shardSUT{latency: seqLatency} })
	s.Engine.Issuers = 2
	good, bad := &shardSUT{latency: seqLatency}, &hostileShareSUT{shardSUT{latency: seqLatency}}
	r, err := NewRun(s, good, &fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet, WithIssuerSUTs(bad))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	share := len(bad.queries()[0].Samples)
	if wantErrs := int64(share + 6); res.ProtocolErrors != wantErrs {
		t.Errorf("%d protocol errors, want %d (a share of %d answered twice, 6 bad ranges): %q", res.ProtocolErrors, wantErrs, share, res.Errors)
	}
	if res.SamplesFailed != 0 || res.SamplesIssued != want.SamplesIssued || res.SampleLatency.MaxNs != want.SampleLatency.MaxNs ||
		res.SampleLatency.MeanNs != want.SampleLatency.MeanNs {
		t.Errorf("a hostile issuer's SUT changed the record: %d failed, %d issued, max %d mean %d; want 0, %d, %d, %d",
			res.SamplesFailed, res.SamplesIssued, res.SampleLatency.MaxNs, res.SampleLatency.MeanNs, want.SamplesIssued, want.SampleLatency.MaxNs, want.SampleLatency.MeanNs)
	}
}

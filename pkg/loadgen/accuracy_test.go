package loadgen

import (
	"context"
	"encoding/binary"
	"log/slog"
	"math"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/rng"
	"github.com/netloadgen/netloadgen/pkg/trace"
	"github.com/netloadgen/netloadgen/pkg/trace/tracetest"
)

// echoSUT answers every sample at once with its QSL index as 4 bytes, or
// without data when bare.
type echoSUT struct {
	bare bool
	mu   sync.Mutex
	got  [][]int
}

func (s *echoSUT) Name() string { return "echo (Network SUT)" }

func (s *echoSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	s.mu.Lock()
	s.got = append(s.got, slices.Clone(q.Samples))
	s.mu.Unlock()
	c := q.Done(nil)
	if !s.bare {
		for _, idx := range q.Samples {
			c.Data = append(c.Data, binary.LittleEndian.AppendUint32(nil, uint32(idx)))
		}
	}
	go done(c)
}

// loadRecorder is a QSL that records every Load.
type loadRecorder struct {
	total, perf int
	loads       [][]int
}

func (q *loadRecorder) TotalSampleCount() int       { return q.total }
func (q *loadRecorder) PerformanceSampleCount() int { return q.perf }
func (q *loadRecorder) Load(_ context.Context, idx []int) error {
	q.loads = append(q.loads, slices.Clone(idx))
	return nil
}

func TestAccuracyRunIssuesEverySampleOnce(t *testing.T) {
	for _, tc := range []struct {
		name        string
		scenario    trace.Scenario
		spq         uint64
		total, perf int
	}{
		{"SingleStream", trace.SingleStream, 1, 37, 10},
		{"Server", trace.Server, 1, 37, 10},
		{"Offline", trace.Offline, 1, 37, 10},
		{"Offline one set", trace.Offline, 1, 20, 64},
		{"MultiStream", trace.MultiStream, 4, 37, 10},
		{"MultiStream whole", trace.MultiStream, 4, 24, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings(RulesetLoadGen6)
			s.Scenario = tc.scenario
			s.MultiStreamSamplesPerQuery = tc.spq
			s.ServerTargetQPS = 1000
			s.QSLRNGSeed, s.SampleIndexRNGSeed, s.ScheduleRNGSeed = 11, 22, 33
			sut := &echoSUT{}
			q := &loadRecorder{total: tc.total, perf: tc.perf}
			run, err := NewAccuracyRun(s, sut, q, WithClock(newFakeClock()), WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			res, err := run.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !res.Complete() {
				t.Fatalf("incomplete: %+v", res)
			}
			wantSets := (tc.total + tc.perf - 1) / tc.perf
			if res.Sets != wantSets || len(q.loads) != wantSets {
				t.Fatalf("%d sets run, %d loads, want %d", res.Sets, len(q.loads), wantSets)
			}
			if len(res.Spans) != wantSets {
				t.Errorf("%d spans, want one per set run (%d)", len(res.Spans), wantSets)
			}
			// generated_query_duration: one inter-arrival past the last
			// query, the constant 1/target_qps but for Server.
			eff, err := trace.EffectiveSettings(run.Settings().TraceSettings(), trace.QSL{TotalSampleCount: uint64(tc.total), PerformanceSampleCount: uint64(tc.perf)})
			if err != nil {
				t.Fatal(err)
			}
			for i, set := range run.Sets() {
				if tc.scenario == trace.Server {
					if last := set.Scheduled[len(set.Scheduled)-1]; set.Duration <= last {
						t.Errorf("set %d: duration %v, want past the last query's %v", i, set.Duration, last)
					}
				} else if period := rng.DurationCastNs(1 / eff.TargetQPS); set.Duration != time.Duration(len(set.Queries))*period {
					t.Errorf("set %d: duration %v, want %d queries × %v", i, set.Duration, len(set.Queries), period)
				}
			}
			// The loaded sets partition the accuracy set.
			var loaded []int
			for i, l := range q.loads {
				if want := min(tc.perf, tc.total-i*tc.perf); len(l) != want {
					t.Errorf("set %d: %d samples, want %d", i, len(l), want)
				}
				loaded = append(loaded, l...)
			}
			sort.Ints(loaded)
			for i, v := range loaded {
				if v != i {
					t.Fatalf("loaded sets are not a partition of [0, %d): %v", tc.total, loaded)
				}
			}
			seen := map[int]int{}
			seqs := map[int]bool{}
			for _, e := range res.Entries {
				if got := int(binary.LittleEndian.Uint32(e.Data)); got != e.QSLIndex {
					t.Fatalf("entry seq %d: qsl_idx %d logged with the response for %d", e.SeqID, e.QSLIndex, got)
				}
				if seqs[e.SeqID] {
					t.Fatalf("seq_id %d logged twice", e.SeqID)
				}
				seqs[e.SeqID] = true
				seen[e.QSLIndex]++
			}
			for i := range tc.total {
				n := seen[i]
				if tc.scenario != trace.MultiStream && n != 1 {
					t.Errorf("QSL index %d logged %d times, want once", i, n)
				}
				if n == 0 {
					t.Errorf("QSL index %d never issued", i)
				}
			}
			// Every query's samples are within the set loaded for it.
			if tc.scenario == trace.Offline && len(sut.got) != wantSets {
				t.Errorf("Offline: %d queries, want one per set (%d)", len(sut.got), wantSets)
			}
			if tc.scenario == trace.MultiStream {
				want := 0
				for i := range wantSets {
					n := min(tc.perf, tc.total-i*tc.perf)
					want += (n + int(tc.spq) - 1) / int(tc.spq)
				}
				if len(sut.got) != want {
					t.Errorf("MultiStream: %d queries, want %d", len(sut.got), want)
				}
				for _, g := range sut.got {
					if len(g) != int(tc.spq) {
						t.Errorf("MultiStream query of %d samples, want %d", len(g), tc.spq)
					}
				}
			}
		})
	}
}

func TestAccuracyRunWithoutResponseBytesFails(t *testing.T) {
	s := DefaultSettings(RulesetLoadGen6)
	run, err := NewAccuracyRun(s, &echoSUT{bare: true}, &loadRecorder{total: 5, perf: 5}, WithClock(newFakeClock()), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete() || res.SamplesFailed != 5 || len(res.Entries) != 0 {
		t.Fatalf("want 5 failed samples and no entries, got %+v", res)
	}
}

func TestAccuracyRunRefusesBadSettings(t *testing.T) {
	s := DefaultSettings(RulesetLoadGen6)
	s.AccuracySampleCountOverride = 10
	if _, err := NewAccuracyRun(s, &echoSUT{}, &loadRecorder{total: 5, perf: 5}); err == nil {
		t.Fatal("an override past the QSL was accepted")
	}
	s = DefaultSettings(RulesetLoadGen6)
	s.Mode = trace.FindPeakPerformance
	if _, err := NewAccuracyRun(s, &echoSUT{}, &loadRecorder{total: 5, perf: 5}); err == nil {
		t.Fatal("find-peak mode was accepted")
	}
}

// expectedTEST01 derives, from LOADGEN-REFERENCE §7.1's description, which
// sample sequence numbers a performance run logs.
func expectedTEST01(target uint64, seed uint64, qps float64, minDurMs, spq, minSamples uint64, offline bool, samples int) []int {
	expected := uint64(qps * float64(minDurMs) / 1000)
	if !offline {
		expected *= spq
	}
	if expected < minSamples {
		expected = minSamples
	}
	prob := float64(target) / float64(expected)
	off := rng.NewMT19937(seed)
	offset := rng.GenerateCanonical(off) // uniform_real(0,1) = canonical·1 + 0
	vals := rng.NewMT19937(5489)
	var out []int
	for seq := 0; seq < samples; seq++ {
		v := rng.GenerateCanonical(vals)
		f := v + offset
		f -= math.Floor(f)
		if f <= prob {
			out = append(out, seq)
		}
	}
	return out
}

func TestSampledAccuracyLogMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scenario trace.Scenario
		target   uint64
	}{
		{"Server", trace.Server, 40},
		{"SingleStream", trace.SingleStream, 25},
		{"Server everything", trace.Server, 100000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings(RulesetLoadGen6)
			s.Scenario = tc.scenario
			s.ServerTargetQPS = 2000
			s.SingleStreamExpectedLatencyNs = 1e6
			s.MinDurationMs = 100
			s.MinQueryCount = 50
			s.AccuracyLogRNGSeed = 720381539243781796
			s.AccuracyLogSamplingTarget = tc.target
			sut := &echoSUT{}
			r, err := NewRun(s, sut, &fakeQSL{total: 64, perf: 64}, WithClock(newFakeClock()), WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			if !r.LogsResponses() {
				t.Fatal("a run with a sampling target does not log responses")
			}
			res, err := r.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			issued := int(res.SamplesIssued)
			e := r.Trace().Settings
			want := expectedTEST01(tc.target, s.AccuracyLogRNGSeed, e.TargetQPS, s.MinDurationMs, e.SamplesPerQuery, e.MinSampleCount, false, issued)
			var got []int
			qs := tracetest.Collect(r.Trace())
			for _, en := range r.AccuracyLog() {
				got = append(got, en.SeqID)
				if idx := int(binary.LittleEndian.Uint32(en.Data)); idx != en.QSLIndex || idx != qs[en.SeqID].Samples[0] {
					t.Fatalf("seq %d: logged qsl_idx %d, data for %d", en.SeqID, en.QSLIndex, idx)
				}
			}
			sort.Ints(got)
			if !slices.Equal(got, want) {
				t.Fatalf("logged %d samples %v\nwant %d %v", len(got), got, len(want), want)
			}
			if len(want) == 0 || (tc.target < 1000 && len(want) == issued) {
				t.Fatalf("the case tests nothing: %d of %d selected", len(want), issued)
			}
		})
	}
}

func TestNoAccuracyLogByDefault(t *testing.T) {
	s := DefaultSettings(RulesetLoadGen6)
	s.MinDurationMs, s.MinQueryCount = 0, 10
	r, err := NewRun(s, &echoSUT{}, &fakeQSL{total: 8, perf: 8}, WithClock(newFakeClock()), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.LogsResponses() || len(r.AccuracyLog()) != 0 {
		t.Fatal("a run without sampling logged responses")
	}
}

// tokenEchoSUT answers as echoSUT, each sample (one a query) with
// 2 + idx%7 tokens and its first byte as the first token's content.
type tokenEchoSUT struct{ echoSUT }

func (s *tokenEchoSUT) IssueQuery(ctx context.Context, q Query, done func(Completion)) {
	s.echoSUT.IssueQuery(ctx, q, func(c Completion) {
		idx := q.Samples[0]
		c.Tokens, c.FirstTokenData = 2+idx%7, c.Data[0][:1]
		done(c)
	})
}

// The accuracy log's entries carry each response's token count and first
// token content, for the log's token_count and token_data.
func TestAccuracyEntriesCarryTokens(t *testing.T) {
	s := DefaultSettings(RulesetLoadGen6)
	s.Scenario, s.ServerTargetQPS, s.UseTokenLatencies = trace.Server, 1000, true
	run, err := NewAccuracyRun(s, &tokenEchoSUT{}, &loadRecorder{total: 30, perf: 30}, WithClock(newFakeClock()), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) != 30 {
		t.Fatalf("%d entries, want 30", len(res.Entries))
	}
	for _, e := range res.Entries {
		if e.TokenCount != int64(2+e.QSLIndex%7) || len(e.TokenData) != 1 || e.TokenData[0] != byte(e.QSLIndex) {
			t.Errorf("entry of sample %d: token_count %d, token_data %x", e.QSLIndex, e.TokenCount, e.TokenData)
		}
	}
}

package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// shardSUT answers every sample inline, each on its own completion, at its
// query's scheduled time plus a latency that depends on the sample's
// sequence number only: whichever issuer sends it, and however late, a
// sample gets the same latency, so runs split N ways can be compared.
type shardSUT struct {
	latency func(seq int) time.Duration
	fail    func(id int) error
	silent  bool
	batch   int           // >1: answer in ranges of this many samples, at the first one's time
	onIssue func(q Query) // before the answer
	after   func()        // after the answer

	mu  sync.Mutex
	got []Query
}

func (s *shardSUT) Name() string { return "shard (Network SUT)" }

func (s *shardSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	s.mu.Lock()
	q.Samples = slices.Clone(q.Samples)
	s.got = append(s.got, q)
	s.mu.Unlock()
	if s.onIssue != nil {
		s.onIssue(q)
	}
	if s.silent {
		return
	}
	var err error
	if s.fail != nil {
		err = s.fail(q.ID)
	}
	step := max(s.batch, 1)
	for j := 0; j < len(q.Samples); j += step {
		c := q.DoneRange(j, min(step, len(q.Samples)-j), err)
		c.At = q.Scheduled.Add(s.latency(q.Sample(j)))
		done(c)
	}
	if s.after != nil {
		s.after()
	}
}

func (s *shardSUT) queries() []Query {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

func seqLatency(seq int) time.Duration { return time.Duration(1+seq%7) * time.Millisecond }

// shardRun runs s with n issuers, each through its own shardSUT made by mk.
func shardRun(t *testing.T, s Settings, n int, mk func(k int) *shardSUT, opts ...Option) (*Run, *Result, []*shardSUT) {
	t.Helper()
	s.Engine.Issuers = n
	suts := make([]*shardSUT, n)
	others := make([]SUT, 0, n-1)
	for k := range suts {
		suts[k] = mk(k)
		if k > 0 {
			others = append(others, suts[k])
		}
	}
	opts = append([]Option{WithClock(newFakeClock()), quiet, WithIssuerSUTs(others...)}, opts...)
	r, err := NewRun(s, suts[0], &fakeQSL{total: 1000, perf: 256}, opts...)
	if err != nil {
		t.Fatalf("NewRun (%d issuers): %v", n, err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatalf("Execute (%d issuers): %v", n, err)
	}
	return r, res, suts
}

// issuedOf is what the SUTs were given, by sample: query, scheduled time
// (ns since the start), QSL index.
func issuedOf(r *Run, suts []*shardSUT) [][3]int64 {
	var out [][3]int64
	for _, s := range suts {
		for _, q := range s.queries() {
			for j, idx := range q.Samples {
				out = append(out, [3]int64{int64(q.Sample(j)), int64(q.Scheduled.Sub(r.startTime)), int64(idx)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// comparable is the result without what depends on when queries were
// handed over (the issuers race on the virtual clock) or on N itself.
func comparable(t *testing.T, res *Result) string {
	t.Helper()
	c := *res
	c.Requested.Engine.Issuers = 0
	c.StartTime, c.EndTime, c.DurationNs = time.Time{}, time.Time{}, 0
	c.IssueLateness, c.GeneratorBound, c.Warnings = LatencyStats{}, nil, nil
	c.FinalQueryIssuedTimeNs, c.QPSWithLoadgenOverhead = 0, 0
	if c.ClosedLoop != nil {
		cl := *c.ClosedLoop
		cl.MaxOutstanding = 0 // how the issuers' queries overlapped
		c.ClosedLoop = &cl
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var sentField = regexp.MustCompile(`"sent":[0-9]+,`)

func samplesOut(t *testing.T, r *Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteSamples(&b); err != nil {
		t.Fatal(err)
	}
	return sentField.ReplaceAllString(b.String(), "")
}

// Split between 1, 2 or 3 issuers, a Server, Offline or concurrency run
// issues the same queries at the same scheduled times with the same QSL
// samples, each issuer's SUT sees only its shard, and the record, the
// samples export and the result are the same.
func TestIssuersSplitTheTraceAndChangeNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   trace.Scenario
		conc int
	}{{"server", trace.Server, 0}, {"offline", trace.Offline, 0}, {"concurrency", trace.SingleStream, 6}} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, tc.sc)
			s.Engine.Concurrency = tc.conc
			var want [][3]int64
			var wantRes, wantOut string
			for _, n := range []int{1, 2, 3} {
				r, res, suts := shardRun(t, s, n, func(int) *shardSUT { return &shardSUT{latency: seqLatency} })
				got := issuedOf(r, suts)
				if len(got) == 0 || int64(len(got)) != res.SamplesIssued || res.SamplesFailed != 0 {
					t.Fatalf("%d issuers: %d samples given to the SUTs, result %d issued %d failed", n, len(got), res.SamplesIssued, res.SamplesFailed)
				}
				for k, sut := range suts {
					for _, q := range sut.queries() {
						if tc.sc == trace.Offline {
							if q.FirstSample != k || max(q.Stride, 1) != n {
								t.Errorf("%d issuers: issuer %d's share starts at sample %d stride %d", n, k, q.FirstSample, q.Stride)
							}
						} else if q.ID%n != k {
							t.Errorf("%d issuers: issuer %d was given query %d", n, k, q.ID)
						}
					}
				}
				out, cmp := samplesOut(t, r), comparable(t, res)
				if n == 1 {
					want, wantRes, wantOut = got, cmp, out
					continue
				}
				if !slices.Equal(got, want) {
					t.Errorf("%d issuers issued other samples than 1 (%d vs %d)", n, len(got), len(want))
				}
				if out != wantOut {
					t.Errorf("%d issuers: the samples export differs from 1 issuer's", n)
				}
				if cmp != wantRes {
					t.Errorf("%d issuers: the result differs from 1 issuer's:\n%s\nvs\n%s", n, cmp, wantRes)
				}
			}
		})
	}
}

// engine.concurrency C split N ways: issuer k keeps C/N outstanding (the
// remainder to the first ones) and waits for its own queries.
func TestIssuersShareTheConcurrencyWindow(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.SingleStream)
	s.Engine.Concurrency, s.Engine.DrainTimeoutMs = 5, 50
	_, res, suts := shardRun(t, s, 2, func(int) *shardSUT { return &shardSUT{silent: true} })
	for k, want := range []int{3, 2} {
		if got := len(suts[k].queries()); got != want {
			t.Errorf("issuer %d of a silent SUT sent %d queries, want its share of the window, %d", k, got, want)
		}
	}
	if res.EndReason != StopStalled {
		t.Errorf("end reason %q, want %q", res.EndReason, StopStalled)
	}
	s.Engine.Concurrency = 2
	s.Engine.Issuers = 3
	_, err := NewRun(s, &shardSUT{}, &fakeQSL{total: 10, perf: 10}, WithIssuerSUTs(&shardSUT{}, &shardSUT{}))
	if !errors.Is(err, trace.ErrInvalidSettings) || !strings.Contains(err.Error(), "issuers") || !strings.Contains(err.Error(), "engine.concurrency") {
		t.Errorf("3 issuers with engine.concurrency 2: %v, want a refusal naming both", err)
	}
}

// A stop of the run stops every issuer: each SUT but issuer 0's is held in
// its first query until issuer 0's first query has stopped the run, and
// then gets no other. (max_query_count: TestIssuersMaxQueryCount.)
func TestIssuersStopTogether(t *testing.T) {
	for _, tc := range []struct {
		name string
		want StopReason
		set  func(s *Settings)
		stop func(cancel context.CancelFunc) // called in issuer 0's first query
		fail bool                            // issuer 0's first query fails
	}{
		{name: "cancel", want: StopCancelled, stop: func(c context.CancelFunc) { c() }},
		{name: "early verdict", want: StopEarlyVerdict, set: func(s *Settings) { s.Engine.EarlyVerdict = true }, fail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSettings(t, RulesetLoadGen6, trace.Server)
			s.MinQueryCount = 10_000
			if tc.set != nil {
				tc.set(&s)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stopped := make(chan struct{})
			var once sync.Once
			mk := func(k int) *shardSUT {
				sut := &shardSUT{latency: seqLatency}
				if k == 0 {
					sut.fail = func(int) error {
						if tc.fail {
							return errors.New("HTTP 500")
						}
						return nil
					}
					sut.onIssue = func(Query) {
						if tc.stop != nil {
							tc.stop(cancel)
						}
					}
					// Once its first query is answered, the run has stopped
					// (the cancel, or the verdict its failure settles).
					sut.after = func() { once.Do(func() { close(stopped) }) }
					return sut
				}
				sut.onIssue = func(Query) { <-stopped }
				return sut
			}
			s.Engine.Issuers = 3
			suts := []*shardSUT{mk(0), mk(1), mk(2)}
			r, err := NewRun(s, suts[0], &fakeQSL{total: 1000, perf: 256}, WithClock(newFakeClock()), quiet, WithIssuerSUTs(suts[1], suts[2]))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Execute(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.EndReason != tc.want {
				t.Errorf("end reason %q, want %q", res.EndReason, tc.want)
			}
			for k, sut := range suts {
				if got := len(sut.queries()); got > 1 {
					t.Errorf("issuer %d sent %d queries after the stop, want its first only", k, got)
				}
			}
		})
	}
}

// max_query_count M is the trace's first M queries, whichever issuer holds
// them: the run issues exactly those, split or not.
func TestIssuersMaxQueryCount(t *testing.T) {
	server := testSettings(t, RulesetLoadGen6, trace.Server)
	server.MaxQueryCount = 10
	closed := testSettings(t, RulesetLoadGen6, trace.SingleStream)
	closed.MaxQueryCount, closed.Engine.Concurrency = 10, 6
	for name, s := range map[string]Settings{"Server": server, "concurrency": closed} {
		for _, n := range []int{1, 3} {
			r, res, suts := shardRun(t, s, n, func(int) *shardSUT { return &shardSUT{latency: seqLatency} })
			got := issuedOf(r, suts)
			if len(got) != 10 || got[0][0] != 0 || got[9][0] != 9 {
				t.Errorf("%s, %d issuers: issued %v, want queries 0 … 9", name, n, got)
			}
			if res.EndReason != StopMaxQueryCount {
				t.Errorf("%s, %d issuers: end reason %q", name, n, res.EndReason)
			}
		}
	}
}

// max_duration seen by any issuer stops them all: none issues more than
// the one query whose issue found the time up.
func TestIssuersMaxDuration(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.MinDurationMs, s.MaxDurationMs = 2000, 100
	r, res, suts := shardRun(t, s, 3, func(int) *shardSUT { return &shardSUT{latency: seqLatency} })
	if res.EndReason != StopMaxDuration {
		t.Errorf("end reason %q, want %q", res.EndReason, StopMaxDuration)
	}
	for k, sut := range suts {
		over := 0
		for _, q := range sut.queries() {
			if q.Scheduled.Sub(r.startTime) > 100*time.Millisecond {
				over++
			}
		}
		if over > 1 {
			t.Errorf("issuer %d issued %d queries due after max_duration, want at most the one that found it", k, over)
		}
	}
	if res.QueriesIssued >= int64(r.Trace().Len()) {
		t.Errorf("issued all %d queries of a 2 s trace cut at 100 ms", res.QueriesIssued)
	}
}

// A split Offline query answered in batches (as the SUT adapters cut it):
// every sample of every share is recorded once, the query completes.
func TestSplitOfflineBatches(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Offline)
	for _, n := range []int{2, 3} {
		_, res, suts := shardRun(t, s, n, func(int) *shardSUT { return &shardSUT{latency: seqLatency, batch: 8} })
		if res.SamplesCompleted != res.SamplesIssued || res.SamplesFailed != 0 || res.ProtocolErrors != 0 || res.QueriesCompleted != 1 || res.EndReason != StopCompleted {
			t.Errorf("%d issuers, batches of 8: %d of %d samples completed, %d failed, %d protocol errors, %d queries completed, %s",
				n, res.SamplesCompleted, res.SamplesIssued, res.SamplesFailed, res.ProtocolErrors, res.QueriesCompleted, res.EndReason)
		}
		if got := len(suts[n-1].queries()[0].Samples); got < 16 {
			t.Errorf("%d issuers: the last share has %d samples, too few for batches to matter", n, got)
		}
	}
}

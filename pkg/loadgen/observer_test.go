package loadgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// recordingObserver keeps everything it is told, per query.
type recordingObserver struct {
	mu        sync.Mutex
	issued    map[int]int           // query → samples
	lateness  map[int]time.Duration // query → lateness
	completed map[int]int           // query → samples completed so far
	failed    map[int]int           // query → samples failed
	errs      []error
	latencies map[int][]time.Duration // query → latency of each successful range
	done      map[int]bool            // query → failed, once
	dupDone   int
	early     int // Completed or QueryDone before Issued
}

func newRecordingObserver() *recordingObserver {
	return &recordingObserver{issued: map[int]int{}, lateness: map[int]time.Duration{}, completed: map[int]int{},
		failed: map[int]int{}, latencies: map[int][]time.Duration{}, done: map[int]bool{}}
}

func (o *recordingObserver) Issued(q, samples int, lateness time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.issued[q], o.lateness[q] = samples, lateness
}

func (o *recordingObserver) Completed(q, samples int, latency time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.issued[q]; !ok {
		o.early++
	}
	o.completed[q] += samples
	if err != nil {
		o.failed[q] += samples
		o.errs = append(o.errs, err)
		return
	}
	for range samples {
		o.latencies[q] = append(o.latencies[q], latency)
	}
}

func (o *recordingObserver) QueryDone(q int, failed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.done[q]; ok {
		o.dupDone++
	}
	if _, ok := o.issued[q]; !ok || o.completed[q] != o.issued[q] {
		o.early++
	}
	o.done[q] = failed
}

var errBoom = errors.New("boom")

// The observer hears of every issued query once, of every sample exactly
// once (response, failure or unanswered), then of the query's end; what it
// hears adds up to the result.
func TestObserverSeesEverySampleOnce(t *testing.T) {
	cases := []struct {
		name      string
		sc        trace.Scenario
		sut       func(*fakeClock) SUT
		late      time.Duration
		sutLat    time.Duration // the SUT's answer time: latency is lateness + sutLat
		failEvery int           // queries with ID%failEvery==1 fail (0: none)
		wantErr   error         // what failures match
	}{
		{name: "Server late issues", sc: trace.Server, late: 300 * time.Microsecond, sutLat: 2 * time.Millisecond,
			sut: func(c *fakeClock) SUT { return &fakeSUT{clock: c, latency: constLatency(2 * time.Millisecond)} }},
		{name: "Server failures", sc: trace.Server, failEvery: 3, wantErr: errBoom, sutLat: time.Millisecond,
			sut: func(c *fakeClock) SUT {
				return &fakeSUT{clock: c, latency: constLatency(time.Millisecond), fail: failEvery(3)}
			}},
		{name: "Server silent SUT", sc: trace.Server, failEvery: 1, wantErr: ErrUnanswered,
			sut: func(c *fakeClock) SUT { return &fakeSUT{clock: c, silent: true} }},
		{name: "Server duplicate completions", sc: trace.Server, sutLat: time.Millisecond,
			sut: func(c *fakeClock) SUT { return &doubleSUT{clock: c} }},
		{name: "MultiStream", sc: trace.MultiStream, sutLat: 5 * time.Millisecond,
			sut: func(c *fakeClock) SUT {
				return &fakeSUT{clock: c, latency: constLatency(5 * time.Millisecond), advance: true}
			}},
		{name: "Offline batches", sc: trace.Offline, sutLat: 5 * time.Millisecond,
			sut: func(c *fakeClock) SUT {
				return &fakeSUT{clock: c, latency: constLatency(5 * time.Millisecond), advance: true, batch: 7}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newFakeClock()
			clk.late = c.late
			s := testSettings(t, RulesetLoadGen6, c.sc)
			s.Engine.DrainTimeoutMs = 50
			o := newRecordingObserver()
			r, err := NewRun(s, c.sut(clk), &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet, WithObserver(o))
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			if int64(len(o.issued)) != res.QueriesIssued || len(o.done) != len(o.issued) || o.dupDone != 0 || o.early != 0 {
				t.Fatalf("%d issued, %d done (%d twice, %d out of order); result issued %d", len(o.issued), len(o.done), o.dupDone, o.early, res.QueriesIssued)
			}
			var issuedS, okS, failedS int64
			var maxLate time.Duration
			for q, n := range o.issued {
				issuedS += int64(n)
				if o.completed[q] != n {
					t.Fatalf("query %d: %d of %d samples reported", q, o.completed[q], n)
				}
				failedS += int64(o.failed[q])
				if wantFail := c.failEvery > 0 && q%c.failEvery == 1%c.failEvery; o.done[q] != wantFail {
					t.Errorf("query %d done failed=%v, want %v", q, o.done[q], wantFail)
				}
				// The virtual clock wakes c.late after a due time it has
				// not passed yet, so Server lateness is in [0, c.late].
				if l := o.lateness[q]; l < 0 || l > c.late {
					t.Errorf("query %d lateness %v, want within [0, %v]", q, l, c.late)
				}
				maxLate = max(maxLate, o.lateness[q])
				for _, lat := range o.latencies[q] {
					okS++
					if want := o.lateness[q] + c.sutLat; lat != want {
						t.Fatalf("query %d: latency %v, want lateness %v + %v", q, lat, o.lateness[q], c.sutLat)
					}
				}
			}
			if maxLate != c.late {
				t.Errorf("max lateness %v, want %v", maxLate, c.late)
			}
			if issuedS != res.SamplesIssued || okS != res.SamplesCompleted || failedS != res.SamplesFailed {
				t.Errorf("observer: %d issued, %d ok, %d failed; result: %d, %d, %d", issuedS, okS, failedS, res.SamplesIssued, res.SamplesCompleted, res.SamplesFailed)
			}
			if (c.wantErr != nil) != (failedS > 0) {
				t.Errorf("%d failed samples, want failures: %v", failedS, c.wantErr != nil)
			}
			for _, err := range o.errs {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("failure %v, want %v", err, c.wantErr)
				}
			}
		})
	}
}

func failEvery(n int) func(int) error {
	return func(id int) error {
		if id%n == 1 {
			return fmt.Errorf("query %d: %w", id, errBoom)
		}
		return nil
	}
}

type nopObserver struct{}

func (nopObserver) Issued(int, int, time.Duration)           {}
func (nopObserver) Completed(int, int, time.Duration, error) {}
func (nopObserver) QueryDone(int, bool)                      {}

// BenchmarkServerIssueObserved is BenchmarkServerIssue's default case with a
// no-op observer: the hook must not add allocations to the hot path.
func BenchmarkServerIssueObserved(b *testing.B) {
	s := DefaultSettings(RulesetLoadGen6)
	s.Scenario = trace.Server
	s.ServerTargetQPS = 50_000
	s.MinDurationMs = 1
	s.MinQueryCount = uint64(b.N)
	r, err := NewRun(s, nullSUT{}, &fakeQSL{total: 1024, perf: 1024}, WithLogger(slog.New(slog.DiscardHandler)), WithObserver(nopObserver{}))
	if err != nil {
		b.Fatal(err)
	}
	r.n = b.N
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := r.Execute(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// resendingSUT is a fakeSUT whose client resent some requests.
type resendingSUT struct {
	*fakeSUT
	n uint64
}

func (s resendingSUT) Resends() uint64 { return s.n }

// resendObserver also hears of resends.
type resendObserver struct {
	nopObserver
	calls int
	n     uint64
}

func (o *resendObserver) Resent(n uint64) { o.calls++; o.n += n }

// A SUT's resends are the result's requests_resent and reach an observer
// that listens for them, once; a SUT that does not count them has none.
func TestResendsReachTheResultAndTheObserver(t *testing.T) {
	for _, want := range []uint64{0, 7} {
		clk := newFakeClock()
		s := testSettings(t, RulesetLoadGen6, trace.Server)
		var sut SUT = &fakeSUT{clock: clk, latency: constLatency(time.Millisecond)}
		if want > 0 {
			sut = resendingSUT{sut.(*fakeSUT), want}
		}
		o := &resendObserver{}
		r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet, WithObserver(o))
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.Execute(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.RequestsResent != int64(want) || o.calls != 1 || o.n != want {
			t.Errorf("requests_resent %d, observer told %d times of %d; want %d, once", res.RequestsResent, o.calls, o.n, want)
		}
	}
}

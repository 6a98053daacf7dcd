package metrics

import (
	"context"
	"log/slog"
	"math"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// goSUT answers every query from its own goroutine, as a network SUT does,
// in ranges of batch samples (0: the whole query); queries whose ID is 3
// mod failEvery fail with a server error.
type goSUT struct {
	batch, failEvery int
}

func (goSUT) Name() string { return "metrics test (Network SUT)" }

func (s goSUT) IssueQuery(_ context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	go func() {
		var err error
		if s.failEvery > 0 && q.ID%s.failEvery == 3 {
			err = kserve.Errorf(codes.Unavailable, "overloaded")
		}
		if s.batch <= 0 {
			done(q.Done(err))
			return
		}
		for first := 0; first < len(q.Samples); first += s.batch {
			done(q.DoneRange(first, min(s.batch, len(q.Samples)-first), err))
		}
	}()
}

type memQSL struct{}

func (memQSL) TotalSampleCount() int             { return 1000 }
func (memQSL) PerformanceSampleCount() int       { return 256 }
func (memQSL) Load(context.Context, []int) error { return nil }

// A real engine run on the system clock: the counters and the latency
// histogram end equal to the result's counts, and the histogram's mean to
// the result's mean latency.
func TestEngineRun(t *testing.T) {
	cases := []struct {
		name string
		sc   trace.Scenario
		sut  goSUT
	}{
		{"Server with failures", trace.Server, goSUT{failEvery: 7}},
		{"Offline in batches", trace.Offline, goSUT{batch: 7}},
		{"MultiStream", trace.MultiStream, goSUT{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, reg := newTest(t)
			s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
			s.Scenario = c.sc
			s.MinDurationMs, s.MinQueryCount = 100, 50
			s.ServerTargetQPS, s.OfflineExpectedQPS = 1000, 1000
			s.MultiStreamSamplesPerQuery = 4
			s.Engine.DrainTimeoutMs = 5000
			r, err := loadgen.NewRun(s, c.sut, memQSL{}, loadgen.WithObserver(m.Observer()),
				loadgen.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatal(err)
			}
			if err := m.RunStarted("run-1", c.sc.String(), "identity", "http://127.0.0.1:1", 1000); err != nil {
				t.Fatal(err)
			}
			res, err := r.Execute(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.SamplesIssued == 0 || (c.sut.failEvery > 0) != (res.SamplesFailed > 0) {
				t.Fatalf("run issued %d samples, %d failed", res.SamplesIssued, res.SamplesFailed)
			}
			want := map[string]float64{
				"loadgend_queries_issued_total":    float64(res.QueriesIssued),
				"loadgend_samples_issued_total":    float64(res.SamplesIssued),
				"loadgend_samples_completed_total": float64(res.SamplesCompleted),
				"loadgend_queries_in_flight":       0,
				"loadgend_samples_in_flight":       0,
			}
			for name, v := range want {
				if got := value(t, reg, name); got != v {
					t.Errorf("%s = %v, result says %v", name, got, v)
				}
			}
			if got := value(t, reg, "loadgend_samples_failed_total", "outcome", "error"); got != float64(res.SamplesFailed) {
				t.Errorf("failed{outcome=error} = %v, result says %d", got, res.SamplesFailed)
			}
			if q := value(t, reg, "loadgend_queries_completed_total") + value(t, reg, "loadgend_queries_failed_total"); q != float64(res.QueriesCompleted) {
				t.Errorf("queries completed+failed = %v, result says %d", q, res.QueriesCompleted)
			}
			h := hist(t, reg, "loadgend_sample_latency_seconds")
			if h.GetSampleCount() != uint64(res.SamplesCompleted) {
				t.Errorf("latency histogram count %d, result completed %d", h.GetSampleCount(), res.SamplesCompleted)
			}
			// MeanNs is truncated to whole ns.
			if mean := h.GetSampleSum() / float64(h.GetSampleCount()) * 1e9; math.Abs(mean-float64(res.SampleLatency.MeanNs)) > 1 {
				t.Errorf("histogram mean %.1f ns, result mean %d ns", mean, res.SampleLatency.MeanNs)
			}
			if l := hist(t, reg, "loadgend_issue_lateness_seconds"); l.GetSampleCount() != uint64(res.QueriesIssued) {
				t.Errorf("lateness histogram count %d, %d queries issued", l.GetSampleCount(), res.QueriesIssued)
			}
			if got := value(t, reg, "loadgend_achieved_samples_per_second"); got <= 0 {
				t.Errorf("achieved rate %v after a run that completed %d samples", got, res.SamplesCompleted)
			}
			if err := m.RunEnded("run-1", StateDone); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// BenchmarkObserver measures the hook's cost per engine call once the
// histograms' buckets exist; it must not allocate.
func BenchmarkObserver(b *testing.B) {
	fail := kserve.Errorf(codes.Unavailable, "overloaded")
	cases := []struct {
		name string
		call func(o loadgen.Observer, i int)
	}{
		{"Completed", func(o loadgen.Observer, i int) { o.Completed(i, 1, time.Duration(100_000+i%50_000), nil) }},
		{"Completed8", func(o loadgen.Observer, i int) { o.Completed(i, 8, time.Duration(100_000+i%50_000), nil) }},
		{"CompletedFailed", func(o loadgen.Observer, i int) { o.Completed(i, 1, 0, fail) }},
		{"Issued", func(o loadgen.Observer, i int) { o.Issued(i, 1, time.Duration(i%50_000)) }},
		{"QueryDone", func(o loadgen.Observer, i int) { o.QueryDone(i, false) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			m, _ := newTest(b)
			o := m.Observer()
			for i := range 100_000 { // create every bucket the loop touches
				c.call(o, i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				c.call(o, i)
			}
		})
	}
}

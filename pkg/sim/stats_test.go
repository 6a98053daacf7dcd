package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
)

type result struct {
	resp *kserve.InferResponse
	err  error
}

// inferAsync starts Infer and returns once the engine has admitted the
// request; the result arrives on the channel.
func inferAsync(ctx context.Context, s *Server, admitted <-chan *job, n int) (<-chan result, *job) {
	out := make(chan result, 1)
	go func() {
		resp, err := s.Infer(ctx, &kserve.InferRequest{Model: "m", Inputs: []kserve.Tensor{
			{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{int64(n), 4}, Data: make([]byte, 16*n)}}})
		out <- result{resp, err}
	}()
	return out, <-admitted
}

func admissions(e *engine) <-chan *job {
	ch := make(chan *job, 16)
	e.onEnqueue = func(j *job) { ch <- j }
	return ch
}

func TestStatisticsAddUp(t *testing.T) {
	s, e, clk := newTestEngine(t, 1, constant(2*ms), nil)
	adm := admissions(e)
	ctx := context.Background()
	a, _ := inferAsync(ctx, s, adm, 2)
	b, _ := inferAsync(ctx, s, adm, 3) // queued behind a
	clk.Advance(2 * ms)
	if r := <-a; r.err != nil {
		t.Fatal(r.err)
	}
	clk.Advance(2 * ms)
	if r := <-b; r.err != nil {
		t.Fatal(r.err)
	}
	resp, err := s.ModelStatistics(ctx, "m", "1")
	if err != nil {
		t.Fatal(err)
	}
	st := resp.ModelStats[0]
	is := st.InferenceStats
	if st.InferenceCount != 5 || st.ExecutionCount != 2 {
		t.Errorf("inference_count %d, execution_count %d; want 5 samples in 2 executions", st.InferenceCount, st.ExecutionCount)
	}
	if is.Success.Count != 2 || is.Queue.Count != 2 || is.ComputeInfer.Count != 2 || is.Fail.Count != 0 {
		t.Errorf("counts: %+v", is)
	}
	if is.Queue.NS != uint64(2*ms) {
		t.Errorf("queue %v, want 2ms (b waited for a)", time.Duration(is.Queue.NS))
	}
	if is.ComputeInfer.NS != uint64(4*ms) {
		t.Errorf("compute_infer %v, want 2 × 2ms", time.Duration(is.ComputeInfer.NS))
	}
	if sum := is.ComputeInput.NS + is.Queue.NS + is.ComputeInfer.NS + is.ComputeOutput.NS; sum != is.Success.NS {
		t.Errorf("success %d ns != input+queue+infer+output %d ns", is.Success.NS, sum)
	}
	if want := uint64(epoch.Add(4 * ms).UnixMilli()); st.LastInference != want {
		t.Errorf("last_inference %d, want %d", st.LastInference, want)
	}
	if len(st.BatchStats) != 2 || st.BatchStats[0].BatchSize != 2 || st.BatchStats[1].BatchSize != 3 {
		t.Errorf("batch_stats %+v, want one execution each of sizes 2 and 3", st.BatchStats)
	}
}

func TestInferCancelledWhileQueued(t *testing.T) {
	s, e, clk := newTestEngine(t, 1, constant(2*ms), nil)
	adm := admissions(e)
	first, _ := inferAsync(context.Background(), s, adm, 1)
	ctx, cancel := context.WithCancel(context.Background())
	second, j := inferAsync(ctx, s, adm, 1)
	if state(e, j) != queued {
		t.Fatal("second request should be queued")
	}
	cancel()
	r := <-second
	var ke *kserve.Error
	if !errors.Is(r.err, context.Canceled) || !errors.As(r.err, &ke) || ke.Code != codes.Canceled {
		t.Fatalf("cancelled Infer: %v, want context.Canceled as a CANCELLED *kserve.Error", r.err)
	}
	if g := e.gauges(); g.queued != 0 || g.busy != 1 {
		t.Errorf("after cancel: %+v, want empty queue, one busy instance", g)
	}
	clk.Advance(2 * ms)
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	st := e.statistics()
	if st.ExecutionCount != 1 || st.InferenceStats.Fail.Count != 1 || st.InferenceStats.Success.Count != 1 {
		t.Errorf("executions %d, fail %d, success %d; want 1, 1, 1", st.ExecutionCount, st.InferenceStats.Fail.Count, st.InferenceStats.Success.Count)
	}
}

func TestLatencyIsDeterministicForASeed(t *testing.T) {
	l := LatencySpec{Distribution: LogNormal, Median: Duration(ms), Sigma: 0.5}
	draws := func(seed uint64) []time.Duration {
		s := newSampler(l, seed, "m")
		out := make([]time.Duration, 20)
		for i := range out {
			out[i] = s.draw(1)
		}
		return out
	}
	if a, b := draws(7), draws(7); !equal(a, b) {
		t.Error("same seed, different latencies")
	}
	if a, b := draws(7), draws(8); equal(a, b) {
		t.Error("different seeds, same latencies")
	}
}

func TestLatencyDistributions(t *testing.T) {
	tests := []struct {
		name     string
		l        LatencySpec
		n        int
		min, max time.Duration
	}{
		{"constant plus per sample", LatencySpec{Distribution: Constant, Value: Duration(2 * ms), PerSample: Duration(ms)}, 3, 5 * ms, 5 * ms},
		{"uniform", LatencySpec{Distribution: Uniform, Min: Duration(ms), Max: Duration(3 * ms)}, 1, ms, 3 * ms},
		{"lognormal capped", LatencySpec{Distribution: LogNormal, Median: Duration(ms), Sigma: 2, Max: Duration(2 * ms)}, 1, 0, 2 * ms},
		{"empirical", LatencySpec{Distribution: Empirical, Samples: []Duration{Duration(ms), Duration(4 * ms)}}, 1, ms, 4 * ms},
		{"none", LatencySpec{}, 8, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSampler(tt.l, 1, "m")
			seen := map[time.Duration]bool{}
			for range 500 {
				d := s.draw(tt.n)
				if d < tt.min || d > tt.max {
					t.Fatalf("draw %v outside [%v, %v]", d, tt.min, tt.max)
				}
				seen[d] = true
			}
			if tt.l.Distribution == Empirical && len(seen) != 2 {
				t.Errorf("empirical drew %d distinct values, want both samples", len(seen))
			}
		})
	}
}

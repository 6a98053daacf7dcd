package sim

import (
	"context"
	"sync"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
)

// The truth, kept where the engine decides the times, and the statistics,
// recorded as answers go, agree once every request was answered: a
// queue behind a busy instance, then a dynamic batch.
func TestTruthMatchesStatistics(t *testing.T) {
	s, e, clk := newTestEngine(t, 1, constant(2*ms), &BatchingSpec{MaxBatchSize: 4, MaxQueueDelay: Duration(ms)})
	adm := admissions(e)
	ctx := context.Background()
	a, _ := inferAsync(ctx, s, adm, 1)
	clk.Advance(ms) // a's queue delay: it runs alone, 1 ms queued
	b, _ := inferAsync(ctx, s, adm, 2)
	c, _ := inferAsync(ctx, s, adm, 1) // b and c wait for a's instance, then go as one batch
	clk.Advance(2 * ms)
	clk.Advance(2 * ms)
	for _, r := range []<-chan result{a, b, c} {
		if res := <-r; res.err != nil {
			t.Fatal(res.err)
		}
	}
	tr, err := s.Truth("m", "")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Requests != 3 || tr.Samples != 4 || tr.Executions != 2 {
		t.Errorf("truth %+v: want 3 requests, 4 samples, 2 executions", tr)
	}
	// a: 1 ms queued; b and c: from 1 ms to 3 ms, 2 ms each.
	if tr.QueueNs != uint64(5*ms) || tr.InferNs != uint64(6*ms) {
		t.Errorf("truth queue %v infer %v, want 5ms and 3 × 2ms", tr.QueueNs, tr.InferNs)
	}
	st := e.statistics()
	is := st.InferenceStats
	if is.Queue.NS != tr.QueueNs || is.ComputeInfer.NS != tr.InferNs || is.Success.Count != tr.Requests ||
		st.ExecutionCount != tr.Executions || st.InferenceCount != tr.Samples {
		t.Errorf("statistics %+v disagree with the truth %+v", st, tr)
	}
	if _, err := s.Truth("nope", ""); err == nil {
		t.Error("the truth of an unknown model")
	}
}

// On the real clock, callers woken by the wake lead may resume before
// their execution's nominal end: the statistics still add up, and still
// agree with the truth.
func TestTruthRealClock(t *testing.T) {
	spec, err := ParseModelFlag("name=m,fn=echo,dims=4,max_batch=8,latency=constant:200us,instances=2")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New([]ModelSpec{spec})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if _, err := s.Infer(context.Background(), &kserve.InferRequest{Model: "m", Inputs: []kserve.Tensor{
					{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 4}, Data: make([]byte, 16)}}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	resp, err := s.ModelStatistics(context.Background(), "m", "")
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := s.Truth("m", "")
	is := resp.ModelStats[0].InferenceStats
	if is.Success.Count != 400 || tr.Requests != 400 || is.Queue.NS != tr.QueueNs || is.ComputeInfer.NS != tr.InferNs {
		t.Errorf("statistics %+v, truth %+v: want 400 requests and equal times", is, tr)
	}
	if sum := is.ComputeInput.NS + is.Queue.NS + is.ComputeInfer.NS + is.ComputeOutput.NS; sum != is.Success.NS {
		t.Errorf("success %d ns != input+queue+infer+output %d ns", is.Success.NS, sum)
	}
}

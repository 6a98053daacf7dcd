package sim

import (
	"context"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

func benchRequest(model string) *kserve.InferRequest {
	return &kserve.InferRequest{Model: model, Inputs: []kserve.Tensor{
		{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: make([]byte, 64)}}}
}

// BenchmarkSaturation4x2ms drives a model of 4 instances × constant 2 ms with
// far more concurrent callers than instances: its capacity is 2000
// inferences/s, and it should come out just under (timers fire late, never
// early).
func BenchmarkSaturation4x2ms(b *testing.B) {
	s, err := New([]ModelSpec{{Name: "m", MaxBatchSize: 1, Function: Echo, Instances: 4,
		Latency: LatencySpec{Distribution: Constant, Value: Duration(2 * time.Millisecond)},
		Inputs:  []TensorSpec{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 16}}}}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	req := benchRequest("m")
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Infer(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "infer/s")
	st, _ := s.ModelStatistics(context.Background(), "m", "")
	q := st.ModelStats[0].InferenceStats.Queue
	b.ReportMetric(float64(q.NS)/float64(max(q.Count, 1))/1e6, "queue-ms/op")
}

// BenchmarkNullModelInfer is the simulator's own cost per request: the
// default null model, no delay.
func BenchmarkNullModelInfer(b *testing.B) {
	s, err := New(DefaultModels())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	req := benchRequest("null")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Infer(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "infer/s")
}

package sim

import (
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// DefaultModels is the set sutproxy serves when given no spec; it is
// documented in docs/sutproxy-models.md.
func DefaultModels() []ModelSpec {
	ms := func(f float64) Duration { return Duration(f * float64(time.Millisecond)) }
	batch := func(dt kserve.DataType, name string, dims ...int64) TensorSpec {
		return TensorSpec{Name: name, Datatype: dt, Shape: append([]int64{-1}, dims...)}
	}
	return []ModelSpec{
		{
			// Triton's classic example model, which its clients' docs and
			// perf_analyzer examples use.
			Name:         "simple",
			MaxBatchSize: 8,
			Inputs:       []TensorSpec{batch(kserve.Int32, "INPUT0", 16), batch(kserve.Int32, "INPUT1", 16)},
			Function:     AddSub,
			Latency:      LatencySpec{Distribution: Constant, Value: ms(1)},
			Instances:    2,
		},
		{
			Name:         "identity",
			MaxBatchSize: 8,
			Inputs:       []TensorSpec{batch(kserve.FP32, "INPUT0", 16)},
			Function:     Echo,
			Latency:      LatencySpec{Distribution: LogNormal, Median: ms(1), Sigma: 0.25, Max: ms(20)},
			Instances:    4,
		},
		{
			// An image classifier's shape (CIFAR-sized) with a heavy tail, for
			// accuracy runs and latency-bound scenarios.
			Name:         "classifier",
			MaxBatchSize: 16,
			Inputs:       []TensorSpec{batch(kserve.FP32, "INPUT0", 3, 32, 32)},
			Function:     Classify,
			NumClasses:   1000,
			Latency:      LatencySpec{Distribution: LogNormal, Median: ms(4), Sigma: 0.3, Max: ms(50), PerSample: ms(0.25)},
			Instances:    2,
		},
		{
			// Server-side batching: throughput grows with load until batches
			// fill, the behaviour Offline and Server searches must find.
			Name:            "batched",
			MaxBatchSize:    32,
			Inputs:          []TensorSpec{batch(kserve.FP32, "INPUT0", 64)},
			Function:        Classify,
			NumClasses:      10,
			Latency:         LatencySpec{Distribution: Constant, Value: ms(5), PerSample: ms(0.1)},
			Instances:       1,
			DynamicBatching: &BatchingSpec{MaxBatchSize: 32, MaxQueueDelay: ms(1)},
		},
		{
			// No delay and a large pool: what the load generator achieves
			// against it is the load generator's own ceiling.
			Name:         "null",
			MaxBatchSize: 64,
			Inputs:       []TensorSpec{batch(kserve.FP32, "INPUT0", 16)},
			Function:     Echo,
			Instances:    1,
		},
		// A simulated LLM with LLMSpec's default law, served over
		// ModelStreamInfer, the generate extension and the OpenAI API.
		DefaultLLM(),
	}
}

package sim

import (
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/triton"
)

// execStats counts executions; the engine updates it under its lock, where it
// already is when an execution ends.
type execStats struct {
	executions uint64
	bySize     map[int]*batchStat
}

type batchStat struct {
	count   uint64
	inferNS uint64
}

func (s *execStats) record(samples int, d time.Duration) {
	s.executions++
	b := s.bySize[samples]
	if b == nil {
		b = &batchStat{}
		s.bySize[samples] = b
	}
	b.count++
	b.inferNS += uint64(max(d, 0))
}

// duration is a Triton StatisticDuration kept with atomics: callers record
// their own requests' times concurrently, without the engine's lock.
type duration struct{ count, ns atomic.Uint64 }

func (d *duration) add(t time.Duration) {
	d.count.Add(1)
	d.ns.Add(uint64(max(t, 0)))
}

func (d *duration) load() triton.Duration {
	return triton.Duration{Count: d.count.Load(), NS: d.ns.Load()}
}

// requestStats are the per-request statistics (Triton's inference_stats).
// For a successful request, success = compute_input (its checks) + queue +
// compute_infer (its execution) + compute_output (building its outputs).
type requestStats struct {
	inferences                                                      atomic.Uint64 // samples of successful requests
	lastMS                                                          atomic.Int64
	success, fail, queue, computeInput, computeInfer, computeOutput duration
}

// statistics snapshots the engine's statistics.
func (e *engine) statistics() triton.ModelStatistics {
	st := triton.ModelStatistics{
		Name:           e.spec.Name,
		Version:        e.version,
		LastInference:  uint64(max(e.req.lastMS.Load(), 0)),
		InferenceCount: e.req.inferences.Load(),
		InferenceStats: triton.InferStatistics{
			Success:       e.req.success.load(),
			Fail:          e.req.fail.load(),
			Queue:         e.req.queue.load(),
			ComputeInput:  e.req.computeInput.load(),
			ComputeInfer:  e.req.computeInfer.load(),
			ComputeOutput: e.req.computeOutput.load(),
		},
		BatchStats: []triton.BatchStatistics{},
	}
	if e.cache != nil {
		st.InferenceStats.CacheHit = e.cache.hits.load()
		st.InferenceStats.CacheMiss = e.cache.misses.load()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st.ExecutionCount = e.exec.executions
	for _, size := range slices.Sorted(maps.Keys(e.exec.bySize)) {
		b := e.exec.bySize[size]
		st.BatchStats = append(st.BatchStats, triton.BatchStatistics{
			BatchSize: uint64(size),
			// Inputs and outputs are per request here (see requestStats), so
			// an execution spends no time of its own on them.
			ComputeInput:  triton.Duration{Count: b.count},
			ComputeInfer:  triton.Duration{Count: b.count, NS: b.inferNS},
			ComputeOutput: triton.Duration{Count: b.count},
		})
	}
	return st
}

package loadgen

import "time"

// FailureSecond is the width of the buckets Timeline.FailedBySecond counts
// failures in. A failure's time is kept per second, not per sample: a run
// failing every request at 50,000 QPS would otherwise keep 8 bytes per
// failed sample on top of its latency record, while a per-second time
// series is all that reads it.
const FailureSecond = time.Second

// Timeline is the run's record of when things happened, for analyses after
// the run (netloadgen's per-second time series). Times are ns on the run's
// clock since its start.
type Timeline struct {
	// SamplesPerQuery: query q holds samples q·SamplesPerQuery … +SamplesPerQuery−1
	// of Run.Samples, whose latencies count from q's scheduled time.
	SamplesPerQuery int
	// Queries is the number of issued queries.
	Queries int
	// FailedBySecond[s] counts the samples a completion failed during
	// second s of the run (by the completion's time). Samples never
	// answered by the end of the drain are not in it: they fail at the
	// run's end (Result.Unanswered).
	FailedBySecond []int64

	times *shardLogs
}

// EachQuery calls fn with every issued query's scheduled and issue times,
// in issue order, until fn returns false. The run keeps them as a compact
// log, not as slices: reading them is a walk (issue 28).
func (tl Timeline) EachQuery(fn func(q int, scheduled, issued int64) bool) {
	if tl.times != nil {
		tl.times.each(fn)
	}
}

// Timeline returns the run's times. Read it only after Execute has
// returned.
func (r *Run) Timeline() Timeline {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return Timeline{
		SamplesPerQuery: r.spq,
		Queries:         r.times.len(),
		FailedBySecond:  append([]int64(nil), r.failedBySec...),
		times:           r.times,
	}
}

// countFailedAt notes n samples failed by a completion at off ns. The
// caller holds errMu (noteFailure).
func (r *Run) countFailedAt(off, n int64) {
	s := int(off / int64(FailureSecond))
	for len(r.failedBySec) <= s {
		r.failedBySec = append(r.failedBySec, 0)
	}
	r.failedBySec[s] += n
}

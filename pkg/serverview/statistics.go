package serverview

import (
	"fmt"
	"slices"
	"strings"
)

// NotOffered is Statistics.Note when the endpoint has no statistics
// extension (HTTP 404 or 501, gRPC UNIMPLEMENTED).
const NotOffered = "not offered"

// NotOfferedStatistics is server.statistics for an endpoint without the
// extension: one line, nothing else.
func NotOfferedStatistics() *Statistics { return &Statistics{Note: NotOffered} }

// Delta is after less before, model version by model version (matched by
// name and version), in after's order. A version absent before is new to
// the server: its delta is after's. A version absent after (unloaded) has
// none. A version whose counts or times went down was restarted or
// reloaded during the run: unsigned counters would wrap around to
// nonsense, so its delta is after's (what it counted since the restart, as
// Prometheus's rate reads a reset) and the note names it; note is "" when
// no version went down.
func Delta(before, after []ModelStats) (delta []ModelStats, note string) {
	type key struct{ name, version string }
	prev := make(map[key]*ModelStats, len(before))
	for i := range before {
		prev[key{before[i].Name, before[i].Version}] = &before[i]
	}
	var reset []string
	delta = make([]ModelStats, 0, len(after))
	for _, a := range after {
		b := prev[key{a.Name, a.Version}]
		if b == nil {
			delta = append(delta, a.clone())
			continue
		}
		d, ok := a.minus(*b)
		if !ok {
			reset = append(reset, fmt.Sprintf("%s version %q", a.Name, a.Version))
			d = a.clone()
		}
		delta = append(delta, d)
	}
	if len(reset) > 0 {
		note = "statistics went down during the run (a restart or reload) for " + strings.Join(reset, ", ") +
			": the delta counts from the restart only"
	}
	return delta, note
}

func (m ModelStats) clone() ModelStats {
	m.BatchStats = slices.Clone(m.BatchStats)
	return m
}

// sub is a − b, ok false when b > a (a counter that went down).
func sub(a, b uint64, ok *bool) uint64 {
	if b > a {
		*ok = false
		return 0
	}
	return a - b
}

func (d Duration) minus(o Duration, ok *bool) Duration {
	return Duration{Count: sub(d.Count, o.Count, ok), NS: sub(d.NS, o.NS, ok)}
}

// minus is m − o for the same model version; ok is false when any count or
// time went down. A batch size absent from o is new: its delta is m's.
func (m ModelStats) minus(o ModelStats) (ModelStats, bool) {
	ok := true
	d := ModelStats{
		Name: m.Name, Version: m.Version,
		InferenceCount: sub(m.InferenceCount, o.InferenceCount, &ok),
		ExecutionCount: sub(m.ExecutionCount, o.ExecutionCount, &ok),
	}
	a, b := m.InferenceStats, o.InferenceStats
	d.InferenceStats = InferStats{
		Success: a.Success.minus(b.Success, &ok), Fail: a.Fail.minus(b.Fail, &ok),
		Queue: a.Queue.minus(b.Queue, &ok), ComputeInput: a.ComputeInput.minus(b.ComputeInput, &ok),
		ComputeInfer: a.ComputeInfer.minus(b.ComputeInfer, &ok), ComputeOutput: a.ComputeOutput.minus(b.ComputeOutput, &ok),
		CacheHit: a.CacheHit.minus(b.CacheHit, &ok), CacheMiss: a.CacheMiss.minus(b.CacheMiss, &ok),
	}
	// A map, not a search per size: a hostile server's thousands of sizes
	// stay linear.
	prev := make(map[uint64]int, len(o.BatchStats))
	for i, ob := range o.BatchStats {
		prev[ob.BatchSize] = i
	}
	for _, mb := range m.BatchStats {
		i, found := prev[mb.BatchSize]
		if !found {
			d.BatchStats = append(d.BatchStats, mb)
			continue
		}
		ob := o.BatchStats[i]
		db := BatchStats{BatchSize: mb.BatchSize, ComputeInput: mb.ComputeInput.minus(ob.ComputeInput, &ok),
			ComputeInfer: mb.ComputeInfer.minus(ob.ComputeInfer, &ok), ComputeOutput: mb.ComputeOutput.minus(ob.ComputeOutput, &ok)}
		if db.ComputeInfer.Count > 0 || db.ComputeInput.Count > 0 || db.ComputeOutput.Count > 0 {
			d.BatchStats = append(d.BatchStats, db)
		}
	}
	return d, ok
}

// Summarize is server.statistics from the delta of a run: the means per
// successful request (every version in delta summed), inferences per
// execution, and the client's overhead, meanLatencyNs (the run's mean
// latency of a request, in ns) less the server's mean request time.
// meanLatencyNs 0 (unknown, or not a request's: Offline's sample latency
// counts from the run's start) leaves ClientOverheadNs 0; so does a run
// in which the server answered no request successfully.
func Summarize(model, version string, delta []ModelStats, note string, meanLatencyNs float64) *Statistics {
	s := &Statistics{Offered: true, Note: note, Model: model, Version: version, Delta: delta}
	if s.Delta == nil {
		s.Delta = []ModelStats{}
	}
	var sum InferStats
	var inferences, executions uint64
	for _, m := range delta {
		inferences += m.InferenceCount
		executions += m.ExecutionCount
		is := m.InferenceStats
		sum.Success.NS += is.Success.NS
		sum.Success.Count += is.Success.Count
		sum.Queue.NS += is.Queue.NS
		sum.ComputeInput.NS += is.ComputeInput.NS
		sum.ComputeInfer.NS += is.ComputeInfer.NS
		sum.ComputeOutput.NS += is.ComputeOutput.NS
	}
	if executions > 0 {
		s.MeanBatchSize = float64(inferences) / float64(executions)
	}
	s.Requests = sum.Success.Count
	if s.Requests == 0 {
		return s
	}
	per := func(ns uint64) float64 { return float64(ns) / float64(s.Requests) }
	s.RequestNs = per(sum.Success.NS)
	s.QueueNs = per(sum.Queue.NS)
	s.ComputeInputNs = per(sum.ComputeInput.NS)
	s.ComputeInferNs = per(sum.ComputeInfer.NS)
	s.ComputeOutputNs = per(sum.ComputeOutput.NS)
	if meanLatencyNs > 0 {
		s.ClientOverheadNs = meanLatencyNs - s.RequestNs
	}
	return s
}

// QueueSince is the mean queue time per successful request between two
// snapshots (a live figure: the last interval's), and the requests it
// averages; 0, 0 when none succeeded between them or a counter went down.
func QueueSince(before, after []ModelStats) (queueNs float64, requests uint64) {
	delta, note := Delta(before, after)
	if note != "" {
		return 0, 0
	}
	var ns uint64
	for _, m := range delta {
		ns += m.InferenceStats.Queue.NS
		requests += m.InferenceStats.Success.Count
	}
	if requests == 0 {
		return 0, 0
	}
	return float64(ns) / float64(requests), requests
}

package main

import (
	"fmt"
	"time"
)

// shapeFlags are the load shapes' flags (issue 31, docs/load-shapes.md)
// that the spec takes in other units: the trace window, in ms.
type shapeFlags struct {
	traceStart, traceDuration time.Duration
}

// addShapeFlags registers the load shapes' flags: run and schedule (a
// shape is the schedule, so `schedule` prints the one `run` issues).
func (f *specFlags) addShapeFlags(sh *shapeFlags) {
	spec := &f.spec
	f.str(&spec.Stages, "stages", "stages", "", "a load shape (docs/load-shapes.md): stages of the arrival rate one after the other, DURATION:RATE or DURATION:FROM->TO (a linear ramp), e.g. 30s:100,60s:100->500,30s:500; a Server schedule judged by --slo (else N/A), not a LoadGen scenario")
	f.str(&spec.Arrivals, "arrivals", "arrivals", "", "how the queries of --stages (or of --mix alone) arrive: poisson (default), constant or gamma:CV (CV > 1: burstier than Poisson)")
	f.str(&spec.Trace, "trace", "trace", "", "replay a trace FILE, every request at its timestamp, open loop: JSONL (timestamp ms, input_length, output_length, optional hash_ids or model: Mooncake's layout) or CSV with a header (Azure's TIMESTAMP,ContextTokens,GeneratedTokens)")
	f.fs.Float64Var(&spec.TraceSpeed, "trace-speed", 0, "scale the trace's time: 2 replays it twice as fast (default 1)")
	f.flagOf["trace_speed"] = "trace-speed"
	f.fs.Var((*durationFlag)(&sh.traceStart), "trace-start", "replay the trace from this offset of its own time (before --trace-speed); a `duration` like 10m")
	f.flagOf["trace_start_ms"] = "trace-start"
	f.fs.Var((*durationFlag)(&sh.traceDuration), "trace-duration", "replay this much of the trace's own time (before --trace-speed; default: to its end); a `duration` like 5m")
	f.flagOf["trace_duration_ms"] = "trace-duration"
	f.str(&spec.Mix, "mix", "mix", "", "a model mix: MODEL=WEIGHT[@URL[;API]],... e.g. identity=0.7,resnet50=0.3: each query's model drawn by weight (seeded), sent to its own URL and API when given; alone, one Poisson stage at --target-qps for --min-duration-ms; --model defaults to the first")
}

// fill writes the trace window into the spec, in whole milliseconds.
func (sh *shapeFlags) fill(traceStartMs, traceDurationMs *uint64) error {
	for _, d := range []struct {
		name string
		v    time.Duration
		dst  *uint64
	}{{"trace-start", sh.traceStart, traceStartMs}, {"trace-duration", sh.traceDuration, traceDurationMs}} {
		if d.v < 0 {
			return fmt.Errorf("--%s: must not be negative, got %v", d.name, d.v)
		}
		if d.v%time.Millisecond != 0 {
			return fmt.Errorf("--%s: %v is not a whole number of milliseconds", d.name, d.v)
		}
		*d.dst = uint64(d.v / time.Millisecond)
	}
	return nil
}

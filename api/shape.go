package api

import (
	"math"
	"strings"
)

// The load shapes' bounds on the spec's own text: a stage or a mix entry
// takes a few dozen bytes, so these bound what pkg/shape is asked to
// parse, not what a shape may say.
const (
	maxShapeLen = 4096
	// MaxTraceSpeed bounds trace_speed (and a sweep's trace_speeds): a
	// trace replayed a thousand times faster is a burst, not a replay.
	MaxTraceSpeed = 1000
)

// checkShape checks the load shape's fields on their own (issue 31,
// docs/load-shapes.md): their lengths, the trace's knobs only with a trace,
// and stages and a trace not together. What they say (the stages' syntax,
// the trace's lines, the mix's entries) pkg/runspec checks with pkg/shape.
func (s RunSpec) checkShape() error {
	for _, f := range []struct{ field, v string }{{"stages", s.Stages}, {"arrivals", s.Arrivals}, {"trace", s.Trace}, {"mix", s.Mix}} {
		if len(f.v) > maxShapeLen {
			return fieldErr(f.field, "longer than %d bytes", maxShapeLen)
		}
		if strings.ContainsRune(f.v, 0) {
			return fieldErr(f.field, "holds a NUL byte")
		}
	}
	if s.Stages != "" && s.Trace != "" {
		return fieldErr("trace", "a trace file gives its own arrival times: leave stages out (or trace, to run the stages)")
	}
	if s.Arrivals != "" && s.Trace != "" {
		return fieldErr("arrivals", "a trace file gives its own arrival times: leave arrivals out")
	}
	if s.Arrivals != "" && s.Stages == "" && s.Mix == "" {
		return fieldErr("arrivals", "is how the stages' queries arrive: give stages (or mix) too")
	}
	if v := s.TraceSpeed; v < 0 || v > MaxTraceSpeed || math.IsNaN(v) {
		return fieldErr("trace_speed", "must be in (0, %d] (1: the trace's own pace; 0 or left out: 1), got %v", MaxTraceSpeed, v)
	}
	if s.Trace == "" {
		for _, k := range []struct {
			field string
			set   bool
		}{{"trace_speed", s.TraceSpeed != 0}, {"trace_start_ms", s.TraceStartMs != 0}, {"trace_duration_ms", s.TraceDurationMs != 0}} {
			if k.set {
				return fieldErr(k.field, "applies to a trace file's replay: give trace too")
			}
		}
	}
	if s.TraceStartMs > maxTraceMs || s.TraceDurationMs > maxTraceMs {
		field := "trace_start_ms"
		if s.TraceDurationMs > maxTraceMs {
			field = "trace_duration_ms"
		}
		return fieldErr(field, "over %d ms (30 days)", uint64(maxTraceMs))
	}
	return nil
}

// maxTraceMs bounds a trace window's start and length: 30 days, in ms,
// far from the overflow of a time.Duration.
const maxTraceMs = 30 * 24 * 3600 * 1000

// Shaped says whether the spec asks for a load shape (stages, a trace
// file or a mix) instead of a LoadGen scenario's schedule.
func (s RunSpec) Shaped() bool { return s.Stages != "" || s.Trace != "" || s.Mix != "" }

// ShapeField is the field that makes the spec's run a shaped one, for the
// refusals that concern the shape as a whole: the trace, the stages, the
// sessions, else the mix.
func (s RunSpec) ShapeField() string {
	switch {
	case s.Trace != "":
		return "trace"
	case s.Stages != "":
		return "stages"
	case s.Sessions != "":
		return "sessions"
	}
	return "mix"
}

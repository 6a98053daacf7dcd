package runspec

import (
	"math"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// builtShape is what a spec's load shape (issue 31) makes of a run: the
// schedule (loadgen.Settings.Shape), the models of its mix, and, for a
// sweep of a trace's speeds, how to replay the trace at another speed.
type builtShape struct {
	shape trace.Shape
	mix   *shape.Mix
	// atSpeed opens the spec's trace at a speed; nil without a trace.
	atSpeed func(speed float64) (trace.Shape, error)
}

// checkShapeRun refuses what a shaped run cannot be: another scenario
// than Server (the shape is a Server schedule), a closed loop, a peak
// search or a sweep of rates (the shape has its own rates), a distributed
// run (its workers would each need the shape, the trace file on their own
// host, and the coordinator a shaped merge: not built).
func checkShapeRun(s api.RunSpec, ls loadgen.Settings) error {
	f := s.ShapeField()
	if ls.Scenario != trace.Server {
		return fieldErr("scenario", "a load shape (%s) is a Server schedule of its own arrivals: leave scenario out or give Server, not %s", f, ls.Scenario)
	}
	if ls.Engine.Concurrency > 0 {
		return fieldErr("settings.concurrency", "a closed loop sends on completions, a load shape (%s) on its own schedule: give one of them", f)
	}
	if s.Workers > 0 {
		return fieldErr("workers", "%d: a load shape (%s) runs on one host: a distributed run's workers cannot carry it yet; leave workers out", s.Workers, f)
	}
	if sp := s.Search; sp != nil {
		switch {
		case sp.Mode == api.SearchFindPeak:
			return fieldErr(f, "a peak search varies LoadGen's Server rate and judges its verdict; a load shape has its own rates and no LoadGen verdict: run it once, or sweep a trace's speed (search.trace_speeds)")
		case len(sp.Rates) > 0:
			return fieldErr(f, "a sweep of rates sets LoadGen's Server rate, which a load shape does not follow: run it once, or, with a trace, sweep its speed (search.trace_speeds)")
		}
	}
	return nil
}

// buildShape builds the spec's load shape with pkg/shape, nil shape when
// it asks for none: the stages (with the run's schedule seed), a trace
// file (found as data is: under env.DataRoot, or as given by the CLI), or
// a mix alone as one constant stage at the run's target QPS for its
// min_duration_ms.
func buildShape(s api.RunSpec, ls loadgen.Settings, env Env) (builtShape, error) {
	var b builtShape
	if !s.Shaped() {
		return b, nil
	}
	if err := checkShapeRun(s, ls); err != nil {
		return b, err
	}
	if s.Mix != "" {
		m, err := shape.ParseMix(s.Mix)
		if err != nil {
			return b, shapeErr("mix", err)
		}
		if s.Model != "" {
			if _, ok := m.Index(s.Model); !ok {
				return b, fieldErr("model", "%q is not in the mix: leave model out (the mix's first model) or name one of its models", s.Model)
			}
		}
		b.mix = m
	}
	var err error
	switch {
	case s.Trace != "":
		b.shape, b.atSpeed, err = buildTrace(s, ls, env, b.mix)
	default:
		b.shape, err = buildStaged(s, ls, b.mix)
	}
	return b, err
}

// buildStaged is the shape of the spec's stages, or of its mix alone.
func buildStaged(s api.RunSpec, ls loadgen.Settings, mix *shape.Mix) (trace.Shape, error) {
	// The models are drawn from the schedule seed too (Mix.Pick salts it:
	// independent of the times), as `loadgend schedule` prints them.
	o := shape.StagedOptions{Seed: ls.ScheduleRNGSeed, Mix: mix, MixSeed: ls.ScheduleRNGSeed}
	p, err := shape.ParseArrivals(s.Arrivals)
	if err != nil {
		return nil, shapeErr("arrivals", err)
	}
	o.Arrivals = p
	field := "stages"
	if s.Stages != "" {
		st, err := shape.ParseStages(s.Stages)
		if err != nil {
			return nil, shapeErr("stages", err)
		}
		o.Stages = st
	} else {
		// A mix alone: LoadGen's Server load, its models drawn.
		field = "mix"
		if ls.MinDurationMs == 0 {
			return nil, fieldErr("settings.min_duration_ms", "a mix without stages or a trace runs one stage at target_qps for min_duration_ms: give it a length")
		}
		d := time.Duration(ls.MinDurationMs) * time.Millisecond
		o.Stages = []shape.Stage{{Duration: d, From: ls.ServerTargetQPS, To: ls.ServerTargetQPS}}
	}
	sh, err := shape.Staged(o)
	if err != nil {
		return nil, shapeErr(field, err)
	}
	return sh, nil
}

// buildTrace opens the spec's trace file at its speed, and returns how to
// open it at another (a sweep of speeds).
func buildTrace(s api.RunSpec, ls loadgen.Settings, env Env, mix *shape.Mix) (trace.Shape, func(float64) (trace.Shape, error), error) {
	path, err := resolveTrace(s.Trace, env)
	if err != nil {
		return nil, nil, err
	}
	o := shape.TraceOptions{
		Speed: s.TraceSpeed, Mix: mix, Model: s.Model,
		// A line naming no model takes one drawn from the schedule seed,
		// as buildStaged's arrivals do: other seeds, other models.
		MixSeed:  ls.ScheduleRNGSeed,
		Start:    time.Duration(s.TraceStartMs) * time.Millisecond,
		Duration: time.Duration(s.TraceDurationMs) * time.Millisecond,
	}
	at := func(speed float64) (trace.Shape, error) {
		o := o
		o.Speed = speed
		sh, err := shape.OpenTrace(path, o)
		if err != nil {
			return nil, shapeErr("trace", err)
		}
		return sh, nil
	}
	sh, err := at(s.TraceSpeed)
	if err != nil {
		return nil, nil, err
	}
	return sh, at, nil
}

// resolveTrace is where the spec's trace file is read from: as given by
// the CLI, else under env.DataRoot as a spec's data is (the daemon reads
// no file a caller names outside it).
func resolveTrace(p string, env Env) (string, error) {
	if env.AnyData && env.DataRoot == "" {
		return p, nil
	}
	real, err := resolveUnder(env.DataRoot, p, "trace", "trace files")
	if err != nil {
		return "", err
	}
	return real, nil
}

// shapeErr is pkg/shape's error as a field error: its own "load shape: "
// and "--flag: " prefixes dropped, since the field (or its flag) names it.
func shapeErr(field string, err error) error {
	msg := strings.TrimPrefix(err.Error(), shape.ErrShape.Error()+": ")
	flag := "--" + strings.ReplaceAll(field, "_", "-")
	for _, p := range []string{flag + ": ", flag + " ", field + ": "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return fieldErr(field, "%s", msg)
}

// checkShapeSize bounds a shaped run by the daemon's limits: its
// arrivals (counted in one pass, stopped past the limit), its length and
// its rate; and so each trial of a sweep of a trace's speeds.
func checkShapeSize(s api.RunSpec, sh trace.Shape, lim api.Limits) error {
	f := s.ShapeField()
	n, d, err := countShape(f, sh, lim)
	if err != nil {
		return err
	}
	// The rate a stage asks, or a trace's mean, is held to the daemon's
	// limit as target_qps is.
	if st, ok := sh.(interface{ Stages() []shape.Stage }); ok {
		rate := 0.0
		for _, x := range st.Stages() {
			rate = max(rate, x.From, x.To)
		}
		return checkShapeBounds(f, "", d, "a stage's rate", rate, lim)
	}
	if err := checkShapeBounds(f, "", d, "the mean rate", meanRate(n, d), lim); err != nil {
		return err
	}
	return checkSweptSpeeds(s, n, d, lim)
}

// countShape is the number of sh's arrivals and its length, refused past
// the daemon's limit on samples.
func countShape(f string, sh trace.Shape, lim api.Limits) (uint64, time.Duration, error) {
	a, err := sh.Arrivals()
	if err != nil {
		return 0, 0, shapeErr(f, err)
	}
	defer a.Close()
	var n uint64
	var last time.Duration
	for x, ok := a.Next(); ok; x, ok = a.Next() {
		if n++; n > lim.MaxTraceSamples {
			return 0, 0, fieldErr(f, "more than %d arrivals, over this daemon's limit of %d samples (LOADGEND_MAX_TRACE_SAMPLES)", lim.MaxTraceSamples, lim.MaxTraceSamples)
		}
		last = x.At
	}
	if err := a.Err(); err != nil {
		return 0, 0, shapeErr(f, err)
	}
	return n, max(last, sh.End()), nil
}

// meanRate is n arrivals over d, 0 when d is (one instant).
func meanRate(n uint64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// checkShapeBounds holds a shape's length d and its rate to the daemon's
// limits: the one check of the base run and of each speed of a sweep,
// field f. The messages start with lengthOf ("" or "speed 2: the replay ")
// and rateOf ("the mean rate").
func checkShapeBounds(f, lengthOf string, d time.Duration, rateOf string, rate float64, lim api.Limits) error {
	if d > lim.MaxDuration {
		return fieldErr(f, "%slasts %v, over this daemon's limit of %v (LOADGEND_MAX_DURATION)", lengthOf, d.Round(time.Millisecond), lim.MaxDuration)
	}
	if rate > lim.MaxQPS {
		return fieldErr(f, "%s, %s QPS, is over this daemon's limit of %s QPS (LOADGEND_MAX_QPS)", rateOf, api.Num(rate), api.Num(lim.MaxQPS))
	}
	return nil
}

// checkSweptSpeeds holds each trial of a sweep of the trace's speeds to
// the daemon's limits, as the run at trace_speed is: the window is taken
// in the trace's own time, so every speed replays the same n arrivals,
// over the base length d scaled by base/speed (a faster replay is
// denser, a slower one longer).
func checkSweptSpeeds(s api.RunSpec, n uint64, d time.Duration, lim api.Limits) error {
	if s.Search == nil || len(s.Search.TraceSpeeds) == 0 {
		return nil
	}
	base := s.TraceSpeed
	if base == 0 {
		base = 1
	}
	for _, v := range s.Search.TraceSpeeds {
		dv := time.Duration(math.Round(float64(d) * base / v))
		at := "speed " + api.Num(v) + ": the replay"
		if err := checkShapeBounds("search.trace_speeds", at+" ", dv, at+"'s mean rate", meanRate(n, dv), lim); err != nil {
			return err
		}
	}
	return nil
}

// mixModel is the spec's model: the one it names, else its mix's first
// (a mix that does not parse is refused later, by buildShape).
func mixModel(s api.RunSpec) string {
	if s.Model != "" || s.Mix == "" {
		return s.Model
	}
	if m, err := shape.ParseMix(s.Mix); err == nil && len(m.Entries) > 0 {
		return m.Entries[0].Model
	}
	return s.Model
}

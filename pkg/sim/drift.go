package sim

import (
	"fmt"
	"math"
	"time"
)

// DegradeSpec makes a model fast for the first After of a period of load
// and slower after it: every execution that starts After or more past the
// period's first arrival takes Factor times its drawn time. A period of load
// starts at the model's first request and again at the first request after
// an idle gap (ModelSpec.Idle). It is the server a short trial misjudges: a
// trial shorter than After sees the fast law, a longer one the slow law.
type DegradeSpec struct {
	After  Duration `json:"after"`
	Factor float64  `json:"factor"`
}

// TransientSpec makes a model answer slowly for the first Window of each
// period of load: a request that arrives within Window of the period's first
// arrival is answered Latency after its execution ends. The hold does not
// occupy an instance (the law's capacity is unchanged), so its effect ends
// with the window, as a cold start's does. It is the server whose first
// fraction of a second must not decide a search.
type TransientSpec struct {
	Window  Duration `json:"window"`
	Latency Duration `json:"latency"`
}

// Restart values: what else than an idle gap starts a period of load.
const (
	// RestartIdle: an idle gap only (the default).
	RestartIdle = "idle"
	// RestartProbe: also the first request after a readiness check of the
	// model, as every netloadgen run makes before its load (its warm-up
	// included), so that every trial of a search meets the law afresh
	// whatever the pause between trials.
	RestartProbe = "probe"
)

// defaultIdle is the arrival gap that ends a period of load.
const defaultIdle = time.Second

// maxDegradeFactor bounds the slowdown: beyond it the model answers nothing
// a test could use.
const maxDegradeFactor = 1000

// checkDrift validates the degrade, transient and idle fields and applies
// idle's default; the error names the field.
func (s *ModelSpec) checkDrift() (string, error) {
	if d := s.Degrade; d != nil {
		if d.After <= 0 || d.After.D() > maxOneLatency {
			return "degrade.after", fmt.Errorf("%s is not in (0, %s]", d.After, maxOneLatency)
		}
		if math.IsNaN(d.Factor) || d.Factor < 1 || d.Factor > maxDegradeFactor {
			return "degrade.factor", fmt.Errorf("%v is not in [1, %d]", d.Factor, maxDegradeFactor)
		}
	}
	if tr := s.Transient; tr != nil {
		if tr.Window <= 0 || tr.Window.D() > maxOneLatency {
			return "transient.window", fmt.Errorf("%s is not in (0, %s]", tr.Window, maxOneLatency)
		}
		if tr.Latency <= 0 || tr.Latency.D() > maxOneLatency {
			return "transient.latency", fmt.Errorf("%s is not in (0, %s]", tr.Latency, maxOneLatency)
		}
	}
	if s.Idle != 0 && s.Degrade == nil && s.Transient == nil {
		return "idle", fmt.Errorf("only degrade and transient use it: give one of them, or leave idle out")
	}
	switch s.Restart {
	case "", RestartIdle, RestartProbe:
	default:
		return "restart", fmt.Errorf("%q is not %q or %q", s.Restart, RestartIdle, RestartProbe)
	}
	if s.Restart != "" && s.Degrade == nil && s.Transient == nil {
		return "restart", fmt.Errorf("only degrade and transient use it: give one of them, or leave restart out")
	}
	if s.Idle < 0 || s.Idle.D() > maxOneLatency {
		return "idle", fmt.Errorf("%s is not in (0, %s]", s.Idle, maxOneLatency)
	}
	if s.Idle == 0 && (s.Degrade != nil || s.Transient != nil) {
		s.Idle = Duration(defaultIdle)
	}
	return "", nil
}

// drift is an engine's periods of load, for its degrade and transient laws.
// Used under the engine's lock.
type drift struct {
	seen        bool
	last, start time.Time // the latest arrival; the current period's first
	probed      bool      // restart: probe, and the model was asked if it is ready
}

// probed notes a readiness check: with restart: probe, the next arrival
// starts a period of load.
func (e *engine) probed() {
	if e.spec.Restart != RestartProbe {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.drift.probed = true
}

// arrived notes a job's arrival and sets its period's start and its hold. An
// arrival dated before the latest one (a kernel stamp taken earlier than a
// request already handled) is no gap: it belongs to the current period.
func (d *drift) arrived(spec *ModelSpec, j *job) {
	if spec.Degrade == nil && spec.Transient == nil {
		return
	}
	if !d.seen || d.probed || j.arrival.Sub(d.last) >= spec.Idle.D() {
		d.start = j.arrival
		d.probed = false
	}
	if !d.seen || j.arrival.After(d.last) {
		d.last = j.arrival
	}
	d.seen = true
	j.period = d.start
	if tr := spec.Transient; tr != nil && j.arrival.Sub(d.start) < tr.Window.D() {
		j.hold = tr.Latency.D()
	}
}

// scaled is an execution's drawn time d under the degrade law: factor times
// d when it starts After or more into the period of its oldest job.
func scaled(spec *ModelSpec, first *job, start time.Time, d time.Duration) time.Duration {
	g := spec.Degrade
	if g == nil || start.Sub(first.period) < g.After.D() {
		return d
	}
	return time.Duration(math.Min(float64(d)*g.Factor, float64(maxOneLatency)))
}

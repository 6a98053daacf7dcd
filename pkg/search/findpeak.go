package search

import (
	"fmt"
	"math"
)

// FindPeakConfig is LoadGen's FindPeakPerformance for Server
// (LOADGEN-REFERENCE.md §4; loadgen.cc:744-1092).
type FindPeakConfig struct {
	// Start is server_target_qps: the base run.
	Start float64
	// StepSize is server_find_peak_qps_boundary_step_size: each boundary
	// run asks for lower × (1+StepSize).
	StepSize float64
	// Decimals is server_find_peak_qps_decimals_of_precision; LoadGen casts
	// it to uint8, and so do we.
	Decimals int
	// Precision, when positive, replaces the decimals rule: the bisection
	// ends once upper − lower ≤ Precision QPS (the API's search.precision).
	Precision float64
	// Upper, when positive, caps the boundary runs (netloadgen's addition:
	// LoadGen widens without limit). A pass at Upper ends the search there.
	Upper float64
}

// findPeak runs the base trial, widens until a trial fails, then bisects.
type findPeak struct {
	cfg     FindPeakConfig
	phase   Phase
	lower   float64 // last passing target; 0 before the base passed
	upper   float64 // first failing target; +Inf before
	pending float64
	done    bool
	outcome Outcome
}

// NewFindPeak plans LoadGen 6's FindPeakPerformance.
func NewFindPeak(c FindPeakConfig) (Planner, error) {
	if err := checkTarget("start QPS", c.Start); err != nil {
		return nil, err
	}
	if !(c.StepSize > 0) || math.IsInf(c.StepSize, 0) {
		return nil, fmt.Errorf("%w: boundary step size must be positive, got %v", ErrConfig, c.StepSize)
	}
	if c.Precision < 0 || math.IsNaN(c.Precision) || c.Upper < 0 || math.IsNaN(c.Upper) {
		return nil, fmt.Errorf("%w: precision and upper must not be negative", ErrConfig)
	}
	if c.Upper > 0 && c.Upper < c.Start {
		return nil, fmt.Errorf("%w: upper %v is below the start %v", ErrConfig, c.Upper, c.Start)
	}
	return &findPeak{cfg: c, phase: PhaseBase, upper: math.Inf(1)}, nil
}

func (f *findPeak) Bounds() (float64, float64) { return f.lower, f.upper }
func (f *findPeak) Outcome() Outcome           { return f.outcome }

func (f *findPeak) Next() (Step, bool) {
	if f.done {
		return Step{}, false
	}
	switch f.phase {
	case PhaseBase:
		f.pending = f.cfg.Start
	case PhaseBoundary:
		f.pending = f.lower * (1 + f.cfg.StepSize)
		if f.cfg.Upper > 0 && f.pending >= f.cfg.Upper {
			f.pending = f.cfg.Upper
		}
	case PhaseBisect:
		if f.finished() {
			f.end(true, f.lower, fmt.Sprintf("bracket [%v, %v) is within the precision", f.lower, f.upper))
			return Step{}, false
		}
		f.pending = f.lower + (f.upper-f.lower)/2
	}
	return Step{Target: f.pending, Phase: f.phase}, true
}

func (f *findPeak) Record(pass bool) {
	if f.done {
		return
	}
	switch f.phase {
	case PhaseBase:
		if !pass {
			// LoadGen logs an error and stops: there is nothing to bracket.
			f.upper = f.pending
			f.end(false, 0, fmt.Sprintf("the base run at %v QPS did not pass; there is nothing to bracket", f.pending))
			return
		}
		f.lower, f.phase = f.pending, PhaseBoundary
	case PhaseBoundary:
		if !pass {
			f.upper, f.phase = f.pending, PhaseBisect
			return
		}
		f.lower = f.pending
		if f.cfg.Upper > 0 && f.pending >= f.cfg.Upper {
			f.end(true, f.lower, fmt.Sprintf("the upper limit %v QPS passed", f.cfg.Upper))
		}
	case PhaseBisect:
		if pass {
			f.lower = f.pending
		} else {
			f.upper = f.pending
		}
	}
}

// finished is IsFinished: floor(l·10^p) + 1 ≥ floor(u·10^p), or the
// absolute precision when one is set. A midpoint float64 can no longer
// separate from a bound also ends it.
func (f *findPeak) finished() bool {
	l, u := f.lower, f.upper
	if m := l + (u-l)/2; m <= l || m >= u {
		return true
	}
	if f.cfg.Precision > 0 {
		return u-l <= f.cfg.Precision
	}
	scale := math.Pow(10, float64(uint8(f.cfg.Decimals)))
	return math.Floor(l*scale)+1 >= math.Floor(u*scale)
}

func (f *findPeak) end(found bool, peak float64, why string) {
	f.done = true
	f.outcome = Outcome{Found: found, Peak: peak, Reason: why}
}

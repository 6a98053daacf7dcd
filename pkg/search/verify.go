package search

import (
	"fmt"
	"math"
)

// VerifyConfig is the v0.5 search: bracket, bisect to a candidate, verify
// it Runs times; a failed verification lowers the candidate and starts the
// verification again (MLPERF.md, Peak search).
type VerifyConfig struct {
	// Start is the first target tried.
	Start float64
	// Upper, when positive, is taken as failing without a trial: the
	// bracket starts as [Start, Upper) once Start passes.
	Upper float64
	// Integer searches whole numbers (MultiStream's stream count): the
	// bisection ends when upper = lower+1 and a failed verification lowers
	// by one.
	Integer bool
	// Precision ends a real bisection once upper − lower ≤ Precision; 0:
	// RelPrecision × lower.
	Precision float64
	// RelPrecision is the default precision as a fraction of the lower
	// bound (0: 0.01).
	RelPrecision float64
	// Delta lowers a candidate that failed verification to
	// candidate × (1 − Delta) (0: 0.01). Ignored for Integer.
	Delta float64
	// Runs is how many verifying trials must all pass (0: 5).
	Runs int
	// MaxHalvings bounds the narrowing when Start fails (0: 10).
	MaxHalvings int
}

// DefaultVerifyRuns is v0.5's count: the reported Server result is the
// minimum of 5 runs.
const DefaultVerifyRuns = 5

type verify struct {
	cfg        VerifyConfig
	phase      Phase
	lower      float64
	upper      float64
	pending    float64
	candidate  float64
	verified   int
	halvings   int
	done       bool
	outcome    Outcome
	passedOnce bool
}

// NewVerify plans a v0.5 search.
func NewVerify(c VerifyConfig) (Planner, error) {
	if err := checkTarget("start", c.Start); err != nil {
		return nil, err
	}
	if c.Integer && c.Start != math.Trunc(c.Start) {
		return nil, fmt.Errorf("%w: an integer search starts at a whole number, got %v", ErrConfig, c.Start)
	}
	if c.Upper < 0 || c.Precision < 0 || c.RelPrecision < 0 || c.Delta < 0 || c.Delta >= 1 || c.Runs < 0 || c.MaxHalvings < 0 {
		return nil, fmt.Errorf("%w: upper, precision and runs must not be negative, delta must be in [0, 1)", ErrConfig)
	}
	if c.Upper > 0 && c.Upper <= c.Start {
		return nil, fmt.Errorf("%w: upper %v must be above the start %v", ErrConfig, c.Upper, c.Start)
	}
	if c.RelPrecision == 0 {
		c.RelPrecision = 0.01
	}
	if c.Delta == 0 {
		c.Delta = 0.01
	}
	if c.Runs == 0 {
		c.Runs = DefaultVerifyRuns
	}
	if c.MaxHalvings == 0 {
		c.MaxHalvings = 10
	}
	return &verify{cfg: c, phase: PhaseBoundary, upper: math.Inf(1), pending: c.Start}, nil
}

func (v *verify) Bounds() (float64, float64) { return v.lower, v.upper }
func (v *verify) Outcome() Outcome           { return v.outcome }

func (v *verify) Next() (Step, bool) {
	if v.done {
		return Step{}, false
	}
	switch v.phase {
	case PhaseBisect:
		if v.narrow() {
			v.startVerify(v.lower)
			return v.Next()
		}
		v.pending = v.mid()
	case PhaseVerify:
		v.pending = v.candidate
	}
	return Step{Target: v.pending, Phase: v.phase}, true
}

func (v *verify) Record(pass bool) {
	if v.done {
		return
	}
	switch v.phase {
	case PhaseBoundary:
		v.recordBoundary(pass)
	case PhaseBisect:
		if pass {
			v.lower = v.pending
		} else {
			v.upper = v.pending
		}
	case PhaseVerify:
		if pass {
			v.verified++
			if v.verified == v.cfg.Runs {
				v.done = true
				v.outcome = Outcome{Found: true, Peak: v.candidate, Verifying: v.cfg.Runs,
					Reason: fmt.Sprintf("%v passed %d verifying runs", v.candidate, v.cfg.Runs)}
			}
			return
		}
		v.lowerCandidate()
	}
}

// recordBoundary brackets the peak: doubling while trials pass, halving
// while they fail.
func (v *verify) recordBoundary(pass bool) {
	switch {
	case pass:
		v.lower, v.passedOnce = v.pending, true
		if v.upper < math.Inf(1) {
			v.phase = PhaseBisect
			return
		}
		if v.cfg.Upper > 0 {
			v.upper, v.phase = v.cfg.Upper, PhaseBisect
			return
		}
		v.pending *= 2
	case v.passedOnce:
		v.upper, v.phase = v.pending, PhaseBisect
	default:
		v.upper = v.pending
		v.halvings++
		next := v.pending / 2
		if v.cfg.Integer {
			next = math.Floor(next)
		}
		if v.halvings > v.cfg.MaxHalvings || next <= 0 {
			v.end(fmt.Sprintf("no target passed down to %v", v.pending))
			return
		}
		v.pending = next
	}
}

func (v *verify) mid() float64 {
	m := v.lower + (v.upper-v.lower)/2
	if v.cfg.Integer {
		m = math.Floor(m)
	}
	return m
}

// narrow reports that the bracket is as narrow as the search goes.
func (v *verify) narrow() bool {
	l, u := v.lower, v.upper
	if v.cfg.Integer {
		return l+1 >= u
	}
	if m := v.mid(); m <= l || m >= u {
		return true
	}
	prec := v.cfg.Precision
	if prec == 0 {
		prec = v.cfg.RelPrecision * l
	}
	return u-l <= prec
}

func (v *verify) startVerify(c float64) {
	v.phase, v.candidate, v.verified = PhaseVerify, c, 0
}

// lowerCandidate: a verification failed, so the candidate was not the peak.
func (v *verify) lowerCandidate() {
	v.upper = min(v.upper, v.candidate)
	next := v.candidate * (1 - v.cfg.Delta)
	if v.cfg.Integer {
		next = v.candidate - 1
	}
	if next <= 0 {
		v.end(fmt.Sprintf("verification failed down to %v", v.candidate))
		return
	}
	v.lower = min(v.lower, next)
	v.startVerify(next)
}

func (v *verify) end(why string) {
	v.done = true
	v.outcome = Outcome{Reason: why}
}

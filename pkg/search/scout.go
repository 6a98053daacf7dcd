package search

import (
	"fmt"
	"math"
)

// Search strategies (Options.Strategy, search.json's strategy).
const (
	// StrategyFull runs every trial at full length: LoadGen's own search,
	// trial for trial.
	StrategyFull = "full"
	// StrategyScout scouts the boundary with short trials, then verifies
	// at full length around it (issue 33): the peak is still a rate whose
	// full-length trial passed, for a fraction of the time.
	StrategyScout = "scout"
)

// Stages of a scout search (Trial.Stage): a short trial that scouts the
// boundary, or a full-length one that verifies it. A full search's trials
// have no stage.
const (
	StageScout  = "scout"
	StageVerify = "verify"
)

// DefaultVerifyStepShare is a scout search's first step down after a
// failed verification when the search has no precision of its own
// (loadgen6's decimals of precision are a bisection's end, 0.1 QPS by
// default, too fine a step for full-length trials): 1% of the candidate,
// v0.5's delta.
const DefaultVerifyStepShare = 0.01

// scoutVerify is the scout strategy over loadgen6's FindPeakPerformance:
// the inner planner's trials, all short, bracket and bisect the boundary;
// then full-length trials verify from the scout's peak down. A failed
// verification steps down by the precision, doubling the step at each
// further failure but never falling by more than half (a scout fooled by a
// server that slows down after its first seconds may be far above the
// peak); once one passes below a failed one by more than
// the precision, full-length trials bisect between them. The peak is the
// highest rate verified.
type scoutVerify struct {
	inner     Planner
	precision float64 // 0: DefaultVerifyStepShare of the candidate
	verifying bool
	candidate float64
	scouted   float64 // the scout's peak
	step      float64 // the last step down; 0 before any
	passed    float64 // highest verified; 0 before any
	failed    float64 // lowest failed verification; +Inf before any
	done      bool
	outcome   Outcome
}

// NewScoutVerify plans the scout strategy over inner, a loadgen6
// FindPeakPerformance (NewFindPeak); precision is the search's (0: none
// given, see DefaultVerifyStepShare).
func NewScoutVerify(inner Planner, precision float64) (Planner, error) {
	if inner == nil || precision < 0 || math.IsNaN(precision) || math.IsInf(precision, 0) {
		return nil, fmt.Errorf("%w: a scout search needs its planner and a precision not negative", ErrConfig)
	}
	return &scoutVerify{inner: inner, precision: precision, failed: math.Inf(1)}, nil
}

func (s *scoutVerify) Outcome() Outcome { return s.outcome }

func (s *scoutVerify) Bounds() (float64, float64) {
	if !s.verifying {
		return s.inner.Bounds()
	}
	return s.passed, s.failed
}

func (s *scoutVerify) Next() (Step, bool) {
	if s.done {
		return Step{}, false
	}
	if !s.verifying {
		if st, ok := s.inner.Next(); ok {
			st.Scout = true
			return st, true
		}
		o := s.inner.Outcome()
		if !o.Found {
			s.end(false, 0, "scout: "+o.Reason)
			return Step{}, false
		}
		s.verifying, s.candidate, s.scouted = true, o.Peak, o.Peak
	}
	return Step{Target: s.candidate, Phase: PhaseVerify}, true
}

func (s *scoutVerify) Record(pass bool) {
	if s.done {
		return
	}
	if !s.verifying {
		s.inner.Record(pass)
		return
	}
	c := s.candidate
	if pass {
		s.passed = max(s.passed, c)
	} else {
		s.failed = min(s.failed, c)
	}
	switch {
	case pass && math.IsInf(s.failed, 1):
		s.end(true, c, fmt.Sprintf("the scout's peak %v passed its full-length verification", c))
	case s.passed > 0 && s.within(s.passed, s.failed):
		s.end(true, s.passed, fmt.Sprintf("%v passed at full length and %v did not: within the precision", s.passed, s.failed))
	case s.passed > 0:
		// A pass below a failure, further apart than the precision: halve
		// at full length.
		s.candidate = s.passed + (s.failed-s.passed)/2
	default:
		s.stepDown()
	}
}

// stepDown is the next verification after a failure with none passed yet:
// the step, doubled at each failure after the first.
func (s *scoutVerify) stepDown() {
	if s.step == 0 {
		s.step = s.precision
		if s.step == 0 {
			s.step = DefaultVerifyStepShare * s.failed
		}
	} else {
		s.step *= 2
	}
	// Never more than a halving: the step grows faster than the rate
	// falls.
	next := max(s.failed-s.step, s.failed/2)
	if next <= s.scouted/maxVerifyFall || next >= s.failed {
		s.end(false, 0, fmt.Sprintf("no rate down to %v passed its full-length verification", s.failed))
		return
	}
	s.candidate = next
}

// maxVerifyFall bounds the verification's fall: below the scout's peak by
// this factor (ten halvings), the scout measured some other server.
const maxVerifyFall = 1024

// within reports that [lo, hi) is as narrow as the verification goes.
func (s *scoutVerify) within(lo, hi float64) bool {
	if m := lo + (hi-lo)/2; m <= lo || m >= hi {
		return true
	}
	prec := s.precision
	if prec == 0 {
		prec = DefaultVerifyStepShare * lo
	}
	return hi-lo <= prec
}

func (s *scoutVerify) end(found bool, peak float64, why string) {
	s.done = true
	s.outcome = Outcome{Found: found, Peak: peak, Reason: why}
}

// scoutBoundary is the scout strategy over v0.5's search, which verifies
// already: its bracketing and bisection trials are short, its verifying
// runs full length.
type scoutBoundary struct{ Planner }

func (s scoutBoundary) Next() (Step, bool) {
	st, ok := s.Planner.Next()
	st.Scout = ok && st.Phase != PhaseVerify
	return st, ok
}

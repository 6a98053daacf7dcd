package search

import (
	"fmt"
	"math"
)

// Search modes (Result.Mode): a peak search, or a sweep over given rates.
const (
	ModeFindPeak = "find-peak"
	ModeSweep    = "sweep"
)

// PhaseSweep marks a sweep's trials: each at one of the rates asked, in order.
const PhaseSweep Phase = "sweep"

// AlgoSweep names a sweep in the record.
const AlgoSweep = "sweep: one trial per rate, in the order given"

// AlgoSweepSpeed names a sweep of a trace file's replay speeds (issue 31).
const AlgoSweepSpeed = "sweep: one replay of the trace per speed, in the order given"

// MaxSweepRates bounds a sweep's trials: each is a full run.
const MaxSweepRates = 100

// SaturatedShare is how far a trial's completion rate may fall below its
// asked rate before a sweep that stops when saturated stops: below 80% of
// the rate asked, the endpoint no longer keeps up (a rate that is kept
// up with completes within a few percent of it), and higher rates only
// queue more.
const SaturatedShare = 0.8

// Sweep is the planner of a load sweep: one trial per rate, in order,
// with no decision to make but, optionally, stopping after a saturated
// trial. It passes judgement on nothing: a sweep has no peak.
type Sweep struct {
	noun          string // what it sweeps, plural: "rates", "trace speeds"
	rates         []float64
	next          int
	stopSaturated bool
	lower, upper  float64
	reason        string
}

// NewSweep plans trials at rates, in order; with stopSaturated, the sweep
// stops after a trial that completed less than SaturatedShare of its rate.
func NewSweep(rates []float64, stopSaturated bool) (*Sweep, error) {
	if len(rates) == 0 {
		return nil, fmt.Errorf("%w: a sweep needs at least one rate", ErrConfig)
	}
	if len(rates) > MaxSweepRates {
		return nil, fmt.Errorf("%w: %d rates; a sweep runs at most %d", ErrConfig, len(rates), MaxSweepRates)
	}
	for _, r := range rates {
		if err := checkTarget("a sweep's rate", r); err != nil {
			return nil, err
		}
	}
	return &Sweep{noun: "rates", rates: append([]float64(nil), rates...), stopSaturated: stopSaturated, upper: math.Inf(1)}, nil
}

// Next is the next rate, or false once every rate ran (or the sweep
// stopped saturated).
func (s *Sweep) Next() (Step, bool) {
	if s.reason != "" || s.next >= len(s.rates) {
		return Step{}, false
	}
	return Step{Target: s.rates[s.next], Phase: PhaseSweep}, true
}

// Record keeps the bracket a peak search would show: the highest rate that
// passed, the lowest that failed.
func (s *Sweep) Record(pass bool) {
	t := s.rates[s.next]
	s.next++
	if pass {
		s.lower = max(s.lower, t)
	} else {
		s.upper = min(s.upper, t)
	}
}

// RecordAchieved takes the completion rate of the trial Record took last,
// and stops the sweep there when it is saturated and asked to stop.
func (s *Sweep) RecordAchieved(target, achieved float64) {
	if s.stopSaturated && achieved < SaturatedShare*target && s.next < len(s.rates) {
		s.reason = fmt.Sprintf("stopped after trial %d: completed %s samples/s of %s asked (below %.0f%%): the endpoint is saturated",
			s.next, fmtNum(math.Round(achieved*10)/10), fmtNum(target), SaturatedShare*100)
	}
}

// Bounds are the highest passing and lowest failing rates so far.
func (s *Sweep) Bounds() (lower, upper float64) { return s.lower, s.upper }

// Outcome: a sweep finds no peak; Reason says whether every rate ran.
func (s *Sweep) Outcome() Outcome {
	if s.reason != "" {
		return Outcome{Reason: s.reason}
	}
	return Outcome{Reason: fmt.Sprintf("completed: %d %s swept", len(s.rates), s.noun)}
}

// NewSpeedSweep plans one replay of a trace per speed, in order (issue
// 31): a sweep whose "rates" are speeds (UnitSpeed), said so when it ends.
func NewSpeedSweep(speeds []float64) (*Sweep, error) {
	s, err := NewSweep(speeds, false)
	if err != nil {
		return nil, err
	}
	s.noun = "trace speeds"
	return s, nil
}

// achievedRecorder is a planner that also decides on completion rates (a
// sweep that stops when saturated).
type achievedRecorder interface {
	RecordAchieved(target, achieved float64)
}

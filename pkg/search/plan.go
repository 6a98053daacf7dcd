package search

import (
	"errors"
	"fmt"
	"math"
)

// ErrConfig reports a search that cannot be planned.
var ErrConfig = errors.New("search: invalid configuration")

// Phase says why a trial is run.
type Phase string

// Phases of a search.
const (
	PhaseBase     Phase = "base"     // loadgen6: the run at the starting target
	PhaseBoundary Phase = "boundary" // widening or narrowing to bracket the peak
	PhaseBisect   Phase = "bisect"   // halving the bracket
	PhaseVerify   Phase = "verify"   // v0.5: repeating the candidate
)

// Step is the next trial a Planner asks for.
type Step struct {
	Target float64 // QPS (Server) or samples per query (MultiStream)
	Phase  Phase
	// Scout asks for a short trial (the scout strategy's first stage);
	// false for a full-length one.
	Scout bool
}

// Outcome is how a search ended.
type Outcome struct {
	Found bool
	// Peak is the highest target that passed as the algorithm requires
	// (every verifying run, for v0.5).
	Peak float64
	// Verifying is how many trials at the end of the search verified the
	// peak (v0.5), all of them passes; 0 for loadgen6.
	Verifying int
	Reason    string
}

// Planner is a search's decisions, free of I/O: Next gives the trial to
// run, Record takes its verdict, until Next says the search is over.
type Planner interface {
	// Next returns the next trial, or false once the search has ended.
	Next() (Step, bool)
	// Record takes the verdict of the step Next returned last.
	Record(pass bool)
	// Bounds are the current bracket on the peak: lower passed (0 before
	// any pass), upper failed (+Inf before any failure).
	Bounds() (lower, upper float64)
	// Outcome is meaningful once Next has returned false.
	Outcome() Outcome
}

func checkTarget(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%w: %s must be a positive number, got %v", ErrConfig, name, v)
	}
	return nil
}

package api

import "fmt"

// State is where a run is in its life.
type State string

// A run is queued, then running, then ends in one of the terminal states.
const (
	StateQueued    State = "queued"
	StateRunning   State = "running"
	StateDone      State = "done"      // the engine finished and wrote its files (VALID or INVALID)
	StateFailed    State = "failed"    // the run could not start or finish (target unreachable, write error)
	StateCancelled State = "cancelled" // POST /v1/runs/{id}/cancel
	// StateInterrupted: the daemon stopped (signal or crash) while the run
	// was going; whatever it had recorded is kept.
	StateInterrupted State = "interrupted"
)

// States lists every state in life order.
func States() []State {
	return []State{StateQueued, StateRunning, StateDone, StateFailed, StateCancelled, StateInterrupted}
}

// Terminal reports whether the run will not change state again.
func (s State) Terminal() bool {
	switch s {
	case StateDone, StateFailed, StateCancelled, StateInterrupted:
		return true
	}
	return false
}

// ParseState accepts a state's name.
func ParseState(name string) (State, error) {
	for _, s := range States() {
		if string(s) == name {
			return s, nil
		}
	}
	return "", fmt.Errorf("%q is not one of %v", name, States())
}

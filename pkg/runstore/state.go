package runstore

import (
	"errors"
	"fmt"
)

// State is where a run is in its life.
type State string

// The states of a run. Done, Failed, Cancelled and Interrupted are terminal.
const (
	Queued      State = "queued"
	Running     State = "running"
	Done        State = "done"
	Failed      State = "failed"
	Cancelled   State = "cancelled"
	Interrupted State = "interrupted"
)

var (
	// ErrFinished is returned for any change to a run in a terminal state:
	// nothing a finished run wrote may be rewritten.
	ErrFinished = errors.New("run is finished")
	// ErrTransition is returned for a change of state the life of a run
	// does not allow (queued to done, say).
	ErrTransition = errors.New("invalid state transition")
	// ErrInvalidState is returned for a state name that is not one of ours.
	ErrInvalidState = errors.New("invalid state")
)

// next lists the states each non-terminal state may move to. A queued run
// that cannot start (its spec no longer admitted, its target no longer
// allowed) fails from queued: every state has a path to an end.
var next = map[State][]State{
	Queued:  {Running, Failed, Cancelled},
	Running: {Done, Failed, Cancelled, Interrupted},
}

// Valid reports whether s is one of the six states.
func (s State) Valid() bool {
	switch s {
	case Queued, Running, Done, Failed, Cancelled, Interrupted:
		return true
	}
	return false
}

// Terminal reports whether s is a final state.
func (s State) Terminal() bool {
	switch s {
	case Done, Failed, Cancelled, Interrupted:
		return true
	}
	return false
}

// ParseState returns the State named s, or an error wrapping ErrInvalidState.
func ParseState(s string) (State, error) {
	st := State(s)
	if !st.Valid() {
		return "", fmt.Errorf("%w: %q (want queued, running, done, failed, cancelled or interrupted)", ErrInvalidState, s)
	}
	return st, nil
}

// checkTransition returns nil when a run may move from one state to the
// other, else an error wrapping ErrFinished, ErrTransition or ErrInvalidState.
func checkTransition(from, to State) error {
	if !to.Valid() {
		return fmt.Errorf("%w: %q", ErrInvalidState, to)
	}
	if from.Terminal() {
		return fmt.Errorf("%w: it is %s, cannot become %s", ErrFinished, from, to)
	}
	for _, s := range next[from] {
		if s == to {
			return nil
		}
	}
	return fmt.Errorf("%w: %s to %s", ErrTransition, from, to)
}

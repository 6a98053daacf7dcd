package trace

import "time"

// SessionStart is one multi-turn session of a shaped run (issue 31): when
// its first turn is due and how many turns it plans. Its later turns' times
// depend on the server's answers, so only the start is a schedule; the
// engine (pkg/loadgen) issues the rest as answers come.
type SessionStart struct {
	// Session is the session's index, 0, 1, … in start order.
	Session int
	// At is its first turn's offset from the run's start.
	At time.Duration
	// Turns is how many turns it plans, at least 1.
	Turns int
}

// SessionIter is a pass over a run's session starts, in start order.
type SessionIter interface {
	Next() (SessionStart, bool)
}

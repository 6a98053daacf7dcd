package trace

import (
	"math/bits"
	"time"
)

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

// sessionSalt keeps the sessions' sample draws apart from the run's other
// counter-based draws (a mix's models) made from the same seeds.
const sessionSalt = 0x5e55_1025_7e57_0031

// SessionSample is the sample of a session's turn (1-based): a
// counter-based hash of the sample index seed, the session and the turn
// into the loaded set, one sample. A run with sessions sends its turns in
// the order the server's answers make them due, so the cursor's draws,
// taken in issue order, would give a turn whichever sample the server's
// timing put next; this depends on the seeds alone, so the same seeds send
// the same conversations.
func (t *Trace) SessionSample(session, turn int) []int {
	z := (t.Settings.SampleIndexRNGSeed ^ sessionSalt) + (uint64(session)<<16|uint64(turn&0xffff)+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	k, _ := bits.Mul64(z, uint64(t.DistributionEnd)) // uniform in [0, DistributionEnd)
	return t.LoadedSet[k : k+1 : k+1]
}

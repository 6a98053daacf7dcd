package search

import "time"

// Retry is a search's second chance for a trial that failed early (issue
// 33): a burst of slow answers in a trial's first moments can fail it, and
// a failure sets the search's upper bound for good, so one transient would
// cap the peak. Such a trial is run once more (Times at most) before its
// verdict stands; both are in the record (Trial.RetryOf, RetriedAs).
//
// "Early" is a failure whose timed run lasted less than Within: the runner
// sets a third of the minimum duration. A transient decides a trial only
// while it is a large share of the samples seen, which is early; a trial
// that failed later has seen mostly steady state, and its failure is the
// server's. The rule holds whatever stopped the trial (the trial early
// verdict, a stall, too many outstanding queries), and bounds what a retry
// is spent on: failures that cost little.
type Retry struct {
	// Times is how many times one step may be retried (0: never).
	Times int
	// Within is "early" (0: no failure is early, so none is retried).
	Within time.Duration
}

// EarlyShare is "early" as a share of a trial's minimum duration: the
// runner sets Retry.Within to it of the full length, and a trial that says
// its own (a scout's, TrialResult.MinDuration) is early within this share
// of that.
const EarlyShare = 1.0 / 3

// failedEarly reports that tr failed within r.Within of its timed run, or
// within EarlyShare of a shorter minimum duration of its own.
func (r Retry) failedEarly(tr TrialResult) bool {
	within := r.Within
	if own := time.Duration(float64(tr.MinDuration) * EarlyShare); own > 0 && own < within {
		within = own
	}
	return !tr.Pass && within > 0 && tr.runDuration() < within
}

// runDuration is the trial's timed run (the wall time of the whole trial
// where the runner did not give it).
func (tr TrialResult) runDuration() time.Duration {
	if tr.RunDuration > 0 {
		return tr.RunDuration
	}
	return tr.Duration
}

// lastDecisive are the indexes into trials of the last n trials whose
// verdict the planner took: a trial retried (RetriedAs) decided nothing.
// Fewer than n when there are not so many.
func lastDecisive(trials []Trial, n int) []int {
	var out []int
	for i := len(trials) - 1; i >= 0 && len(out) < n; i-- {
		if trials[i].RetriedAs == 0 {
			out = append(out, i)
		}
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out
}

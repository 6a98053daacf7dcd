package stats

import "fmt"

// Verdict is whether a trial's outcome on one criterion is already settled.
type Verdict int

const (
	// Undecided: the samples still to come can change the outcome.
	Undecided Verdict = iota
	// Pass: the criterion holds however the remaining samples turn out.
	Pass
	// Fail: the criterion fails however the remaining samples turn out.
	Fail
)

func (v Verdict) String() string {
	switch v {
	case Undecided:
		return "undecided"
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// MaxOverForPercentile returns the largest number of n latencies that may be
// over a bound with LoadGen's percentile sorted[floor(n·p)] still within it:
// n − 1 − min(floor(n·p), n−1). That rank is ≤ bound iff at least rank+1
// latencies are ≤ bound.
func MaxOverForPercentile(n int64, p float64) (int64, error) {
	if n <= 0 {
		return 0, fmt.Errorf("%w: %d queries", ErrInvalidArgument, n)
	}
	if !(p >= 0 && p <= 1) {
		return 0, fmt.Errorf("%w: percentile %v not in [0, 1]", ErrInvalidArgument, p)
	}
	k := min(int64(float64(n)*p), n-1)
	return n - 1 - k, nil
}

// Decide settles a criterion of the form "at most allowed of total samples
// over the bound" when done of them are in and over of those were over
// (failed included): Fail once over > allowed, Pass once even every
// remaining sample being over would keep it ≤ allowed. With allowed from
// MaxOverForPercentile it decides the Server latency constraint; with
// MinPassingFinder.MaxOverLatency(total) it decides Server early stopping.
// A search may stop a trial at a settled verdict and get the answer the full
// trial would give (MLPERF.md, Peak search).
func Decide(allowed, total, done, over int64) Verdict {
	switch {
	case over > allowed:
		return Fail
	case over+(total-done) <= allowed:
		return Pass
	}
	return Undecided
}

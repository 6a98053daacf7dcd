package stats

import (
	"fmt"
	"sync/atomic"
	"time"
)

// A sample in flight keeps its query's scheduled time in its own slot, so a
// run needs no other per-query memory to time its answers (issue 28): the
// slot holds −(scheduled+2), below slotFailed, until Finish or FailInFlight
// replaces it, once, by compare-and-swap (which is also what keeps a second
// completion of the same sample from counting).
const slotInFlight = -2

// Start marks sample i in flight, due at scheduled ns (≥ 0) since the run's
// start. The slot must be unrecorded. Start happens-before the sample's
// Finish (the caller hands the query to the SUT after it).
func (r *LatencyRecord) Start(i int, scheduled int64) error {
	if scheduled < 0 {
		return fmt.Errorf("%w: sample %d scheduled at %d ns", ErrInvalidLatency, i, scheduled)
	}
	s, err := r.slot(i)
	if err != nil {
		return err
	}
	if atomic.LoadInt64(s) != 0 {
		return fmt.Errorf("%w: sample %d", ErrAlreadyRecorded, i)
	}
	atomic.StoreInt64(s, slotInFlight-scheduled)
	return nil
}

// InFlightScheduled is sample i's scheduled time while it is in flight.
func (r *LatencyRecord) InFlightScheduled(i int) (int64, bool) {
	s, err := r.slot(i)
	if err != nil {
		return 0, false
	}
	if v := atomic.LoadInt64(s); v <= slotInFlight {
		return slotInFlight - v, true
	}
	return 0, false
}

// InFlight reports whether sample i is in flight (started, not finished).
func (r *LatencyRecord) InFlight(i int) bool {
	_, ok := r.InFlightScheduled(i)
	return ok
}

// Finish records the latency of in-flight sample i answered at ns since
// the start: at − scheduled, 0 if the answer is stamped before it was due
// (a clock artefact). False if the sample was not in flight: never started,
// or already finished or failed. Safe against concurrent Finish and
// FailInFlight of the same sample: one of them wins.
func (r *LatencyRecord) Finish(i int, at int64) (time.Duration, bool) {
	s, err := r.slot(i)
	if err != nil {
		return 0, false
	}
	v := atomic.LoadInt64(s)
	if v > slotInFlight {
		return 0, false
	}
	d := time.Duration(max(at-(slotInFlight-v), 0))
	if !atomic.CompareAndSwapInt64(s, v, int64(d)+1) {
		return 0, false
	}
	if d > r.bound {
		r.over.Add(1)
	}
	return d, true
}

// FailInFlight marks in-flight sample i failed; false if it was not in
// flight.
func (r *LatencyRecord) FailInFlight(i int) bool {
	s, err := r.slot(i)
	if err != nil {
		return false
	}
	v := atomic.LoadInt64(s)
	if v > slotInFlight || !atomic.CompareAndSwapInt64(s, v, slotFailed) {
		return false
	}
	r.failed.Add(1)
	return true
}

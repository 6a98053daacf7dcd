package loadgen

import (
	"errors"
	"fmt"
)

// StopReason says why the engine stopped issuing queries.
type StopReason string

// Stop reasons; every one but StopCompleted is an early end, and the
// result's EndMessage gives LoadGen's wording where it has one.
const (
	StopCompleted       StopReason = "completed"          // ended naturally
	StopRanOut          StopReason = "ran_out_of_queries" // SS/MS used up the trace
	StopMaxQueryCount   StopReason = "max_query_count"
	StopMaxDuration     StopReason = "max_duration"
	StopTooManyInFlight StopReason = "too_many_outstanding_queries" // server_max_async_queries
	StopCancelled       StopReason = "cancelled"
	// StopInterrupted is a cancel whose cause is ErrInterrupted: the load
	// generator shut down under the run, nobody cancelled it.
	StopInterrupted  StopReason = "interrupted"
	StopEarlyVerdict StopReason = "early_verdict"
	StopStalled      StopReason = "sut_stalled" // no response within the drain timeout
	// StopShapeEnded: a pass over the load shape ended before its last
	// arrival (its trace file changed or could not be read again), so the
	// run did not send the load it was asked to.
	StopShapeEnded StopReason = "load_shape_ended_early"
)

func (r StopReason) message() string {
	switch r {
	case StopCompleted:
		return "Ending naturally: Minimum query count and test duration met."
	case StopRanOut:
		return "Ending early: Ran out of generated queries to issue before the minimum query count and test duration were reached. Please update the relevant expected latency or target qps in the TestSettings so they are more accurate."
	case StopMaxQueryCount:
		return "Ending early: Max query count reached."
	case StopMaxDuration:
		return "Ending early: Max test duration reached."
	case StopTooManyInFlight:
		return "Ending early: Too many outstanding queries."
	case StopCancelled:
		return "Ending early: the run was cancelled."
	case StopInterrupted:
		return "Ending early: the run was interrupted (the load generator shut down)."
	case StopEarlyVerdict:
		return "Ending early: the run's verdict was settled (early verdict)."
	case StopStalled:
		return "Ending early: the SUT sent no response within the drain timeout."
	case StopShapeEnded:
		return "Ending early: the load shape ended before its last arrival."
	}
	return string(r)
}

// endMessage is reason's message for this run: a stall while answers were
// still streaming (StreamingSUT) is not a SUT that sent no response.
func (r *Run) endMessage(reason StopReason) string {
	if reason == StopStalled && r.streamingAtDrain > 0 {
		return fmt.Sprintf("Ending early: the SUT was still streaming at the drain timeout (%d answers had tokens but no end).", r.streamingAtDrain)
	}
	if err := r.shapeError(); reason == StopShapeEnded && err != nil {
		return "Ending early: load shape ended early: " + err.Error()
	}
	return reason.message()
}

// ErrInterrupted, as the cause of the cancel of Execute's context
// (context.WithCancelCause), makes the run end StopInterrupted rather than
// StopCancelled.
var ErrInterrupted = errors.New("loadgen: interrupted: the load generator is shutting down")

// shapeEnded records err, why a pass over the load shape (an issuer's or
// the warm-up's) ended before its last arrival, and stops the run: what
// is left of the schedule cannot be read, and a run that silently sent
// part of its load must not read as a clean one (shapeVerdict).
func (r *Run) shapeEnded(err error) StopReason {
	r.stopMu.Lock()
	first := r.shapeErr == nil
	if first {
		r.shapeErr = err
	}
	r.stopMu.Unlock()
	if first {
		r.log.Error("load shape ended early", "err", err)
		r.noteError("load shape ended early: " + err.Error())
	}
	return r.stopAll(StopShapeEnded)
}

// shapeError is the error shapeEnded recorded, nil if none.
func (r *Run) shapeError() error {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	return r.shapeErr
}

// shapeVerdict makes a run whose shape ended early INVALID, whatever its
// SLO or its lack of one (N/A would pass as an exit status reads it),
// naming the pass's error.
func (r *Run) shapeVerdict(res *Result) {
	err := r.shapeError()
	if err == nil {
		return
	}
	res.Valid, res.Validity = false, "INVALID"
	res.InvalidReasons = append(res.InvalidReasons, "load shape ended early: "+err.Error()+
		"; the run sent only part of its schedule (keep the trace file unchanged while it runs)")
}

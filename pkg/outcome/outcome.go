// Package outcome says why a sample failed: an Outcome from a small fixed
// set and the protocol Status the server answered with, if any. It is the
// one classifier of failures: the live metrics (pkg/metrics) label their
// counters with it and the engine's result counts its failures by it
// (loadgen.WithFailureClassifier, set by pkg/runner), so both always agree.
//
// The engine knows no transport and cannot import kserve; this package sits
// beside the adapters, above both.
package outcome

import (
	"context"
	"errors"
	"os"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// Outcome is why samples failed: the value of loadgend_samples_failed_total's
// outcome label and of result.json's failures[].outcome. The set is fixed,
// so the label cannot multiply series.
type Outcome int

// Outcomes, in the order Classify tests them.
const (
	// Unanswered: no response before the engine's drain timeout.
	Unanswered Outcome = iota
	// Timeout: the request's deadline passed (client timeout) or the
	// server answered DEADLINE_EXCEEDED / 504 / 408.
	Timeout
	// ConnectionClosed: the request was written and the server closed or
	// reset its connection before answering it (kserve.ErrConnectionClosed).
	// It may have reached the server, so it was not sent again.
	ConnectionClosed
	// Transport: below the protocol otherwise (a refused connection, a
	// failed connect, a write that failed).
	Transport
	// Error: the server answered with an error status.
	Error
	// Malformed: a response that could not be decoded or did not match the
	// request.
	Malformed
	// TooLarge: an answer larger than the client reads
	// (kserve.ErrTooLarge: --max-response-bytes, or the answers in flight
	// together past the client's budget), read no further.
	TooLarge
	// BadResponse: a well-formed answer that is not the model's
	// (kserve.ErrBadResponse): another model's name, outputs missing or
	// unknown, an output's datatype or shape not the metadata's.
	BadResponse
	// Other: anything else (e.g. a request that could not be encoded).
	Other
	// Count is the number of outcomes, for arrays indexed by Outcome.
	Count
)

var outcomeNames = [Count]string{"unanswered", "timeout", "connection_closed", "transport", "error", "malformed", "too_large", "bad_response", "other"}

// String returns the label value.
func (o Outcome) String() string {
	if o < 0 || o >= Count {
		return "other"
	}
	return outcomeNames[o]
}

// Outcomes returns every outcome label value.
func Outcomes() []string { return outcomeNames[:] }

// Classify says which outcome a failed completion's error is, and the
// status the server answered with. A timeout is tested before a transport
// error because the HTTP client reports its request timeout as both. It
// costs about 1 µs and 5 allocations for an error holding a *kserve.Error,
// whose Is method calls errors.As; only failures pay it.
func Classify(err error) (Outcome, Status) {
	ke, answered := errors.AsType[*kserve.Error](err)
	var st Status
	if answered {
		st = statusOf(ke)
	}
	switch {
	case errors.Is(err, loadgen.ErrUnanswered):
		return Unanswered, st
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		answered && ke.Code == codes.DeadlineExceeded:
		return Timeout, st
	case errors.Is(err, kserve.ErrConnectionClosed):
		return ConnectionClosed, st
	case errors.Is(err, kserve.ErrTransport):
		return Transport, st
	case errors.Is(err, kserve.ErrMalformed):
		return Malformed, st
	case errors.Is(err, kserve.ErrTooLarge):
		return TooLarge, st
	case errors.Is(err, kserve.ErrBadResponse):
		return BadResponse, st
	case answered:
		return Error, st
	}
	return Other, st
}

// Names is Classify as the engine wants it (loadgen.FailureClassifier):
// the outcome's label value and the status's String.
func Names(err error) (outcome, status string) {
	o, st := Classify(err)
	return o.String(), st.String()
}

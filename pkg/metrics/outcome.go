package metrics

import (
	"context"
	"errors"
	"os"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// Outcome is why samples failed: the value of loadgend_samples_failed_total's
// outcome label. The set is fixed, so the label cannot multiply series.
type Outcome int

// Outcomes, in the order Classify tests them.
const (
	// OutcomeUnanswered: no response before the engine's drain timeout.
	OutcomeUnanswered Outcome = iota
	// OutcomeTimeout: the request's deadline passed (client timeout) or the
	// server answered DEADLINE_EXCEEDED / 504 / 408.
	OutcomeTimeout
	// OutcomeConnectionClosed: the request was written and the server
	// closed or reset its connection before answering it
	// (kserve.ErrConnectionClosed). It may have reached the server, so it
	// was not sent again.
	OutcomeConnectionClosed
	// OutcomeTransport: below the protocol otherwise (a refused
	// connection, a failed connect, a write that failed).
	OutcomeTransport
	// OutcomeError: the server answered with an error status.
	OutcomeError
	// OutcomeMalformed: a response that could not be decoded or did not
	// match the request.
	OutcomeMalformed
	// OutcomeBadResponse: a well-formed answer that is not the model's
	// (kserve.ErrBadResponse): another model's name, outputs missing or
	// unknown, an output's datatype or shape not the metadata's.
	OutcomeBadResponse
	// OutcomeOther: anything else (e.g. a request that could not be encoded).
	OutcomeOther
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"unanswered", "timeout", "connection_closed", "transport", "error", "malformed", "bad_response", "other"}

// String returns the label value.
func (o Outcome) String() string {
	if o < 0 || o >= numOutcomes {
		return "other"
	}
	return outcomeNames[o]
}

// Outcomes returns every outcome label value.
func Outcomes() []string { return outcomeNames[:] }

// Classify says which outcome a failed completion's error is. A timeout is
// tested before a transport error because the HTTP client reports its
// request timeout as both. It costs about 1 µs and 5 allocations for an
// error holding a *kserve.Error, whose Is method calls errors.As; only
// failures pay it.
func Classify(err error) Outcome {
	ke, answered := errors.AsType[*kserve.Error](err)
	switch {
	case errors.Is(err, loadgen.ErrUnanswered):
		return OutcomeUnanswered
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		answered && ke.Code == codes.DeadlineExceeded:
		return OutcomeTimeout
	case errors.Is(err, kserve.ErrConnectionClosed):
		return OutcomeConnectionClosed
	case errors.Is(err, kserve.ErrTransport):
		return OutcomeTransport
	case errors.Is(err, kserve.ErrMalformed):
		return OutcomeMalformed
	case errors.Is(err, kserve.ErrBadResponse):
		return OutcomeBadResponse
	case answered:
		return OutcomeError
	}
	return OutcomeOther
}

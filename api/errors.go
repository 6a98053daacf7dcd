package api

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrBodyTooLarge is wrapped by the FieldError DecodeRunSpec returns for a
// body over Limits.MaxBodyBytes: the server answers 413, not 400.
var ErrBodyTooLarge = errors.New("request body too large")

// FieldError is a request the API refuses, naming the part at fault. Field
// is a JSON path into the request ("settings.target_qps"), "" for the body
// as a whole.
type FieldError struct {
	Field   string
	Message string
	// Err is a sentinel the error wraps (ErrBodyTooLarge), or nil.
	Err error
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Error codes of ErrorDetail.Code: stable strings clients may switch on.
const (
	CodeInvalidRequest   = "invalid_request"    // 400: the body or a parameter is wrong; Field names it
	CodeUnauthorized     = "unauthorized"       // 401: missing or wrong bearer token
	CodeTargetNotAllowed = "target_not_allowed" // 403: the target is outside LOADGEND_ALLOWED_TARGETS
	CodeHostNotAllowed   = "host_not_allowed"   // 403: the Host header names no host of this daemon (DNS rebinding)
	CodeOriginNotAllowed = "origin_not_allowed" // 403: a web page elsewhere (Origin) sent it, or a CORS preflight
	CodeNotFound         = "not_found"          // 404: no such run, file or route
	CodeMethodNotAllowed = "method_not_allowed" // 405
	CodeNotFinished      = "not_finished"       // 409: the run has no result yet
	CodeAlreadyFinished  = "already_finished"   // 409: cancel of a run in a terminal state
	CodeBodyTimeout      = "body_timeout"       // 408: the body did not arrive within LOADGEND_BODY_TIMEOUT
	CodeBodyTooLarge     = "body_too_large"     // 413
	CodeUnsupportedMedia = "unsupported_media_type"
	CodeQueueFull        = "queue_full"       // 429: too many queued runs
	CodeInternal         = "internal"         // 500
	CodeUnavailable      = "unavailable"      // 503: not ready, or shutting down
	CodeVersionMismatch  = "version_mismatch" // 409: a worker of another version than the coordinator's
	CodeNameTaken        = "name_taken"       // 409: a live worker holds the name
	CodeRunEnded         = "run_ended"        // 409: a worker's ready or records for a distributed run that ended, or that it is not in
)

// ErrorBody is the JSON body of every 4xx and 5xx answer.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Field is the JSON path of the request part at fault, when one is.
	Field string `json:"field,omitempty"`
}

// NewErrorBody builds an error body.
func NewErrorBody(code, message, field string) ErrorBody {
	return ErrorBody{Error: ErrorDetail{Code: code, Message: message, Field: field}}
}

// ErrorFor maps a decoding error to its HTTP status and body: a body over
// the limit is 413, any other FieldError 400; anything else is the server's
// fault (500) and its text is not shown to the client.
func ErrorFor(err error) (int, ErrorBody) {
	var fe *FieldError
	switch {
	case errors.Is(err, ErrBodyTooLarge):
		return http.StatusRequestEntityTooLarge, NewErrorBody(CodeBodyTooLarge, err.Error(), "")
	case errors.As(err, &fe):
		return http.StatusBadRequest, NewErrorBody(CodeInvalidRequest, fe.Error(), fe.Field)
	}
	return http.StatusInternalServerError, NewErrorBody(CodeInternal, "internal error", "")
}

package kserve

import (
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
)

// Error is an error the server answered with (or, server side, will answer
// with): its status on both transports and its message.
type Error struct {
	Code       codes.Code // the gRPC status, also derived for HTTP answers
	HTTPStatus int        // the HTTP status; 0 when the answer came over gRPC
	Message    string
	// Location is a 3xx answer's Location header, resolved against the
	// request's URL: clients follow no redirect, and the probe names it.
	Location string
}

func (e *Error) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("server: HTTP %d: %s", e.HTTPStatus, e.Message)
	}
	return fmt.Sprintf("server: %s: %s", e.Code, e.Message)
}

// Is matches the sentinel errors below by code, so callers can write
// errors.Is(err, kserve.ErrNotFound) whatever the transport.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Message == "" && t.HTTPStatus == 0 && t.Code == e.Code
}

// Sentinels for errors.Is against an *Error.
var (
	ErrNotFound        = &Error{Code: codes.NotFound}
	ErrInvalidArgument = &Error{Code: codes.InvalidArgument}
	ErrUnavailable     = &Error{Code: codes.Unavailable}
	ErrUnimplemented   = &Error{Code: codes.Unimplemented}
	ErrInternal        = &Error{Code: codes.Internal}
)

// ErrMalformed marks a message that could not be decoded.
var ErrMalformed = errors.New("malformed message")

// ErrTooLarge marks an answer larger than the client reads: its size
// (announced, or read so far) passed the per-answer bound, or its buffer
// would have taken the answers being read past the client's total. The
// answer is read no further and its connection closed.
var ErrTooLarge = errors.New("answer too large")

// ErrTransport marks a failure below the protocol: a refused or reset
// connection, an unexpected close. A load generator counts it as a failed
// request, never as a success.
var ErrTransport = errors.New("transport error")

// ErrConnectionClosed marks a request that was written, in part or whole,
// on a connection the server then closed or reset before the request's
// answer was complete. The server may have read it, and run it: it is not
// sent again, and fails. It always comes with ErrTransport.
var ErrConnectionClosed = errors.New("connection closed by the server before the answer")

// Errorf builds a server-side *Error with the given code.
func Errorf(code codes.Code, format string, args ...any) *Error {
	return &Error{Code: code, HTTPStatus: HTTPStatus(code), Message: fmt.Sprintf(format, args...)}
}

// HTTPStatus maps a gRPC code to the status Triton answers with: not found
// 404, unavailable 503, unimplemented 501, internal 500, anything else 400.
func HTTPStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.NotFound:
		return http.StatusNotFound
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.Unimplemented:
		return http.StatusNotImplemented
	case codes.Internal, codes.Unknown, codes.DataLoss:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// CodeFromHTTP maps an HTTP status to a gRPC code (the inverse of HTTPStatus,
// plus 422, which the KServe Python server answers for malformed JSON).
func CodeFromHTTP(status int) codes.Code {
	switch {
	case status >= 200 && status < 300:
		return codes.OK
	case status == http.StatusNotFound:
		return codes.NotFound
	case status == http.StatusServiceUnavailable:
		return codes.Unavailable
	case status == http.StatusNotImplemented:
		return codes.Unimplemented
	case status == http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case status == http.StatusUnauthorized:
		return codes.Unauthenticated
	case status == http.StatusForbidden:
		return codes.PermissionDenied
	case status == http.StatusGatewayTimeout || status == http.StatusRequestTimeout:
		return codes.DeadlineExceeded
	case status >= 500:
		return codes.Internal
	}
	return codes.InvalidArgument
}

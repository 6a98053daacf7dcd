package httpclient

// Answers read as they arrive (server-sent events): the caller writes the
// request with the client's pool, prefix, headers and TLS, and reads the
// answer itself from the connection's buffered reader, with the kernel's
// receive time of the bytes it read (kserve/genclient).

import (
	"bufio"
	"context"
	"errors"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// StreamReader reads one answer from a connection (its status line,
// headers and body). keep says the answer was read to its end and the
// connection may carry another request. An error that wraps
// kserve.ErrMalformed or is a *kserve.Error is returned as it is (the
// connection is closed); any other is the transport's, wrapped as
// roundTrip wraps them (kserve.ErrTransport, kserve.ErrConnectionClosed).
type StreamReader interface {
	ReadStream(a *Answer) (keep bool, err error)
}

// Answer is the connection an answer is read from, lent to a StreamReader
// for the duration of its ReadStream.
type Answer httpConn

// Reader is the connection's buffered reader. It reads from the socket
// only when its buffer is empty, so Arrival after a read is the arrival of
// the bytes that read returned.
func (a *Answer) Reader() *bufio.Reader { return a.br }

// Arrival is when the latest bytes read from the socket reached this
// host's kernel, read before now; now itself when the connection has no
// receive timestamps (or none since the request was written).
func (a *Answer) Arrival(now time.Time) time.Time {
	if a.rx != nil {
		if t, ok := a.rx.Arrival(now); ok {
			return t
		}
	}
	return now
}

// AppendRequest appends an HTTP/1.1 request for path (under the base URL's
// prefix) with the client's Host and added headers: a POST of body with
// contentType, or a GET when body is nil.
func (c *Client) AppendRequest(dst []byte, path, contentType string, body []byte) []byte {
	if body == nil {
		return c.appendRequest(dst, "GET", c.prefix+path, "", -1, nil)
	}
	return c.appendRequest(dst, "POST", c.prefix+path, contentType, -1, body)
}

// AppendRequestWith is AppendRequest's POST with one more header, name:
// value (a request's own id, as X-Request-Id).
func (c *Client) AppendRequestWith(dst []byte, path, contentType, name string, value, body []byte) []byte {
	return c.appendRequestWith(dst, "POST", c.prefix+path, contentType, -1, name, value, body)
}

// Stream sends raw (AppendRequest's) and has sr read the answer, on a
// pooled connection, with roundTrip's rules: a request that provably never
// reached the server is sent again once on a fresh connection; one that was
// written never is. A cancelled ctx (or the client's request timeout)
// interrupts a blocked read: the error then wraps kserve.ErrTransport and
// ctx's error.
func (c *Client) Stream(ctx context.Context, raw []byte, sr StreamReader) error {
	return c.roundTripWith(ctx, raw, nil, sr, nil)
}

// MaxConnections is the cap on open connections (MaxConns).
func (c *Client) MaxConnections() int { return c.cfg.maxConns }

// protocolError says whether a StreamReader's error is about the answer
// (malformed, or the server's error) rather than the connection.
func protocolError(err error) bool {
	_, answered := errors.AsType[*kserve.Error](err)
	return answered || errors.Is(err, kserve.ErrMalformed) || errors.Is(err, kserve.ErrTooLarge)
}

package grpcloop

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// ErrUnsupported is New's error where the loop cannot run (not Linux).
var ErrUnsupported = errors.New("grpcloop: not supported on this platform")

// ErrClosed is the error of a call sent after Close.
var ErrClosed = errors.New("grpcloop: closed")

// Config configures a Loop.
type Config struct {
	// Addr is the server's host:port; a host name is resolved once, by New.
	Addr string
	// Conns is the number of HTTP/2 connections (default 4). Calls go to
	// the connection with the fewest in flight; one connection would put
	// every call behind one reader and one writer on the server.
	Conns int
	// Timeout bounds a call from Send to its answer (0: none). Time spent
	// waiting for a stream counts. Requests built with the same timeout
	// tell the server (grpc-timeout).
	Timeout time.Duration
	// DialTimeout bounds Preconnect (default 5 s).
	DialTimeout time.Duration
	// Slack is the timer slack of the loop's short sleeps until a due time
	// (0: the thread's own, 50 µs by default): a larger one wakes the
	// loop once for more due times, for less CPU and more issue lateness
	// (rawio.Poller.Slack).
	Slack time.Duration
	// OnDone is called once per Send, on the goroutine that polls, with the
	// Send's tag, nil or the call's error, and for an answer the time the
	// data that completed it reached this host: the kernel's receive
	// timestamp, so an answer read later keeps its true arrival time. It
	// may call Send.
	OnDone func(tag uint64, at time.Time, err error)
	// Check, when set, is called on the polling goroutine with a Send's
	// tag and its answer, a successful call's message without its
	// raw_output_contents (the tensor bytes of a ModelInferResponse,
	// skipped as they arrive: kserve.Expect.CheckProto). The slice is the
	// loop's, valid only during the call. Its error becomes the call's, as
	// does a message that is not protobuf.
	Check func(tag uint64, msg []byte) error
}

func (c *Config) normalise() error {
	if c.OnDone == nil {
		return fmt.Errorf("grpcloop: Config.OnDone is required")
	}
	if c.Conns == 0 {
		c.Conns = 4
	}
	if c.Conns < 0 {
		return fmt.Errorf("grpcloop: connections %d: must be positive", c.Conns)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("grpcloop: timeout %v: must not be negative", c.Timeout)
	}
	if c.Slack < 0 {
		return fmt.Errorf("grpcloop: timer slack %v: must not be negative", c.Slack)
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("grpcloop: address %q: %w", c.Addr, err)
	}
	return nil
}

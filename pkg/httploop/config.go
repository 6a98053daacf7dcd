package httploop

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/netloadgen/netloadgen/kserve/httpclient"
)

// ErrUnsupported is New's error where the loop cannot run (not Linux).
var ErrUnsupported = errors.New("httploop: not supported on this platform")

// ErrClosed is the error of a request sent after Close.
var ErrClosed = errors.New("httploop: closed")

// Config configures a Loop.
type Config struct {
	// Addr is the server's host:port; a host name is resolved once, by New.
	Addr string
	// MaxConns caps the open connections (default 64). Requests beyond
	// them wait in FIFO order for a connection to come free.
	MaxConns int
	// Timeout bounds a request from Send to its answer (0: none). Time
	// spent waiting for a connection counts.
	Timeout time.Duration
	// DialTimeout bounds Preconnect (default 5 s), and each TLS handshake.
	DialTimeout time.Duration
	// TLS, when set, is the client configuration of an https:// server's
	// connections (its ServerName set: the loop does not derive it from
	// Addr). The loop speaks HTTP/1.1 by ALPN and offers no session
	// resumption (tls_linux.go says why). Handshakes run on goroutines of
	// their own; records are encrypted and decrypted on the loop's.
	TLS *tls.Config
	// Slack is the timer slack of the loop's short sleeps until a due time
	// (0: the thread's own, 50 µs by default): a larger one wakes the
	// loop once for more due times, for less CPU and more issue lateness
	// (rawio.Poller.Slack).
	Slack time.Duration
	// OnDone is called once per Send, on the goroutine that polls, with the
	// Send's tag, nil or the request's error, and for an answer the time
	// its last byte reached this host: the kernel's receive timestamp, so
	// an answer read later (the loop reads sockets when it wakes to send,
	// not on each packet) keeps its true arrival time. It may call Send.
	OnDone func(tag uint64, at time.Time, err error)
	// Check, when set, is called on the polling goroutine with a Send's
	// tag and the JSON of its 2xx, well-framed answer: the header of a
	// binary-extension body, or the whole of a JSON body (within
	// MaxResponseBytes and MaxResponseBytesTotal: past them the answer is
	// too large). The slice is the loop's, valid only during the call.
	// Its error becomes the request's, as if the server had answered with
	// it (kserve.Expect.CheckAnswer).
	//
	// binLen is the bytes of the body after the JSON header of a binary
	// answer, -1 for a JSON body: the outputs' binary_data_size must add
	// up to it (kserve.Expect.CheckAnswer).
	Check func(tag uint64, json []byte, binLen int64) error
	// MaxResponseBytes bounds one answer's body (0: the default,
	// httpclient.DefaultMaxResponseBytes): past it, or announced past it,
	// the answer fails as kserve.ErrTooLarge and its connection is closed,
	// read no further. The loop keeps only an answer's JSON (the header
	// of a binary one), but an endless body must still end.
	MaxResponseBytes int
	// MaxResponseBytesTotal bounds the JSON every connection keeps at once
	// (0: httpclient.DefaultResponseBudget of MaxResponseBytes): an answer
	// whose JSON would pass it fails as too large.
	MaxResponseBytesTotal int64
	// Budget, when set, is the budget the connections' kept JSON is
	// reserved from instead of one of MaxResponseBytesTotal of the loop's
	// own: loops that share it (the issuers of one run, each a loop on its
	// own thread; the budget is atomic) hold at most its limit between
	// them, as one loop would.
	Budget *httpclient.Budget
}

func (c *Config) normalise() error {
	if c.OnDone == nil {
		return fmt.Errorf("httploop: Config.OnDone is required")
	}
	if c.MaxConns == 0 {
		c.MaxConns = 64
	}
	if c.MaxConns < 0 {
		return fmt.Errorf("httploop: max connections %d: must be positive", c.MaxConns)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("httploop: timeout %v: must not be negative", c.Timeout)
	}
	if c.Slack < 0 {
		return fmt.Errorf("httploop: timer slack %v: must not be negative", c.Slack)
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = httpclient.DefaultMaxResponseBytes
	}
	if c.MaxResponseBytesTotal <= 0 {
		c.MaxResponseBytesTotal = httpclient.DefaultResponseBudget(c.MaxResponseBytes)
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("httploop: address %q: %w", c.Addr, err)
	}
	return nil
}

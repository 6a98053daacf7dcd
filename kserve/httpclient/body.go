package httpclient

// Answers read within bounds: one answer's body at most maxBody bytes
// (MaxResponseBytes), the bodies of every answer being read or checked at
// once within the client's Budget (MaxResponseBytesTotal), and an error
// the HTTP parser finds without the socket failing under it is the
// server's bytes' fault (kserve.ErrMalformed), as pkg/httploop says.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"github.com/netloadgen/netloadgen/kserve"
)

// DefaultMaxResponseBytes is the default bound on one answer's body, on
// both HTTP tensor clients (this one and pkg/httploop): a tensor answer
// larger than 64 MiB is rare enough to ask for a flag
// (--max-response-bytes).
const DefaultMaxResponseBytes = 64 << 20

// minResponseBudget is the least a client's answers may hold at once.
const minResponseBudget = 256 << 20

// DefaultResponseBudget is the default bound on the bytes the answers of
// one client hold at once, whatever its connection count: four answers at
// the per-answer bound, and at least 256 MiB (256 connections of 1 MiB
// answers). A bound on the sum rather than on each connection, because a
// connection cap of 256 times 64 MiB is 16 GiB: a server that answers
// every connection endlessly would take that much.
func DefaultResponseBudget(maxAnswer int) int64 {
	return max(4*int64(maxAnswer), minResponseBudget)
}

// KeepBetweenAnswers is the largest body buffer a connection keeps from
// one answer to the next, on both HTTP clients (this one and
// pkg/httploop): a kept buffer holds no answer, so it is outside the
// budget, and 256 connections keep at most 16 MiB so.
const KeepBetweenAnswers = 64 << 10

// Budget is the memory a client's answers may hold at once: connections
// reserve from it as their buffers grow and release it when the answer is
// done. Safe for concurrent use (the pool's readers); the event loop's
// single reader pays an uncontended atomic.
type Budget struct {
	limit      int64
	held, peak atomic.Int64
}

// NewBudget is a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Reserve takes n bytes, or reports false and takes nothing when they
// would pass the limit.
func (b *Budget) Reserve(n int64) bool {
	h := b.held.Add(n)
	if h > b.limit {
		b.held.Add(-n)
		return false
	}
	for p := b.peak.Load(); h > p && !b.peak.CompareAndSwap(p, h); p = b.peak.Load() {
	}
	return true
}

// Release gives back n bytes Reserve took.
func (b *Budget) Release(n int64) { b.held.Add(-n) }

// Limit is the budget's bound.
func (b *Budget) Limit() int64 { return b.limit }

// Grow is buf with its capacity raised to size, the bytes added reserved
// from b and counted in *held (the answer's reservation, given back with
// Release when the answer is done); an OverBudget error, and nothing
// reserved, when they would take b past its limit. Both HTTP clients
// grow an answer's buffer through it.
func (b *Budget) Grow(buf []byte, size int, held *int64) ([]byte, error) {
	if more := int64(size - cap(buf)); more > 0 {
		if !b.Reserve(more) {
			return nil, OverBudget(b)
		}
		*held += more
	}
	grown := make([]byte, len(buf), size)
	copy(grown, buf)
	return grown, nil
}

// Held is what is reserved now.
func (b *Budget) Held() int64 { return b.held.Load() }

// Peak is the most ever reserved at once.
func (b *Budget) Peak() int64 { return b.peak.Load() }

// TooLarge is the error of an answer over the per-answer bound (what is
// the size so far or announced).
func TooLarge(size int64, limit int) error {
	return fmt.Errorf("%w: a body of %d bytes or more, over the limit of %d (--max-response-bytes)", kserve.ErrTooLarge, size, limit)
}

// OverBudget is the error of an answer whose buffer would take the
// client's answers past their budget.
func OverBudget(b *Budget) error {
	return fmt.Errorf("%w: the answers being read hold %d bytes, and this one would pass their budget of %d (4 x --max-response-bytes, at least 256 MiB)",
		kserve.ErrTooLarge, b.Held(), b.Limit())
}

// answer is a response and the memory its body holds: read as a stream
// into buf, which grows by reservations from the client's budget.
type answer struct {
	fasthttp.Response
	buf  []byte
	held int64
}

// meter is the connection's reader under its bufio.Reader: it keeps the
// socket's last read error, so that a failed parse with none is the
// answer's fault, not the connection's.
type meter struct {
	r   io.Reader
	err error
}

func (m *meter) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if err != nil {
		m.err = err
	}
	return n, err
}

// readAnswer reads one answer on conn into a, its body within the limits.
func (c *Client) readAnswer(conn *httpConn, a *answer) error {
	conn.meter.err = nil
	a.StreamBody = true
	if err := a.ReadLimitBody(conn.br, 0); err != nil {
		return readError(conn, err)
	}
	body := a.BodyStream()
	if body == nil {
		return nil // no body (204, 304)
	}
	if n := a.Header.ContentLength(); n > c.cfg.maxBody {
		return TooLarge(int64(n), c.cfg.maxBody)
	}
	buf := a.buf[:0]
	for {
		if len(buf) == cap(buf) {
			grown, err := c.grow(a, buf)
			if err != nil {
				return err
			}
			buf = grown
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return readError(conn, err)
		}
	}
	a.buf = buf
	// The body stream is done; the answer's body is buf, not a copy.
	a.SetBodyRaw(buf)
	return nil
}

// grow makes room in buf for more of a's body, within the per-answer bound
// (one byte past it, to see it passed) and the client's budget: at once
// to the end a Content-Length gives (+1, to see the end of the stream),
// else by doubling.
func (c *Client) grow(a *answer, buf []byte) ([]byte, error) {
	if len(buf) > c.cfg.maxBody {
		return nil, TooLarge(int64(len(buf)), c.cfg.maxBody)
	}
	size := min(max(2*cap(buf), 32<<10), c.cfg.maxBody+1)
	if n := a.Header.ContentLength(); n >= 0 {
		size = min(n+1, c.cfg.maxBody+1)
	}
	return c.budget.Grow(buf, size, &a.held)
}

// release gives back a's reservation and keeps a small buffer for the next
// answer.
func (c *Client) release(a *answer) {
	c.budget.Release(a.held)
	a.held = 0
	if cap(a.buf) > KeepBetweenAnswers {
		a.buf = nil
	}
	c.resps.Put(a)
}

// readError classifies an error of the read of an answer: the socket's
// (a timeout, a reset, the end of the stream) is returned as it is, for
// roundTrip to wrap as the transport's; one the parser found in bytes the
// socket delivered is malformed.
func readError(conn *httpConn, err error) error {
	var ne net.Error
	switch {
	case conn.meter.err != nil, errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return err
	}
	return kserve.Malformedf("HTTP answer: %v", err)
}

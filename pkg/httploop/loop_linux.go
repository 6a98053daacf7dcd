//go:build linux

package httploop

import (
	"context"
	"fmt"
	"math"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netloadgen/netloadgen/internal/rawio"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
)

const (
	readBufSize = 64 << 10
	maxEvents   = 128
	never       = math.MaxInt64
	maxDialing  = 4 // connects in progress at once while requests wait
)

// Loop is the client. Send and PollUntil must be called from one goroutine
// at a time (the issuer's); nothing in it runs on another goroutine except
// the wake-up of a cancelled context.
type Loop struct {
	cfg  Config
	peer rawio.Peer

	poll rawio.Poller // the epoll set, its timer and wake-up, the loop's clock
	buf  []byte       // read buffer shared by every connection: one goroutine reads
	// TLS (Config.TLS): the plaintext of what buf held, and the
	// handshakes under way; nil for plain text.
	plain []byte
	hs    *handshakes
	rx    rawio.Receiver
	// budget is what every connection's kept JSON holds at once
	// (Config.MaxResponseBytesTotal).
	budget *httpclient.Budget

	slots      []*conn // by epoll key
	idle       []*conn // LIFO: the warmest connection first
	queue      fifo
	open       int // connections open or connecting
	connecting int
	busy       int

	checkAt int64 // the earliest request deadline that may have passed

	// Little's law, from what the run shows: the mean gap between sends
	// and the mean time a connection takes to answer, both smoothed.
	lastSend int64
	gap, svc float64 // ns
	svcCeil  float64 // svc's limit until riseAt
	riseAt   int64
	answered int

	delivered uint64
	unstamped bool // an answer came without a receive timestamp: no quiet waits
	retries   uint64
	connErr   error
	closed    bool
}

// New resolves the address and sets up the epoll set. It opens no
// connection: Preconnect does, or the first Send.
func New(cfg Config) (*Loop, error) {
	if err := cfg.normalise(); err != nil {
		return nil, err
	}
	peer, err := rawio.Resolve(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("httploop: resolve %q: %w", cfg.Addr, err)
	}
	l := &Loop{cfg: cfg, peer: peer, checkAt: never, buf: make([]byte, readBufSize), budget: cfg.Budget}
	if l.budget == nil {
		l.budget = httpclient.NewBudget(cfg.MaxResponseBytesTotal)
	}
	if err := l.poll.Open("httploop", maxEvents); err != nil {
		l.Close()
		return nil, err
	}
	l.poll.Slack = cfg.Slack
	if cfg.TLS != nil {
		l.cfg.TLS = tlsConfig(cfg.TLS)
		l.plain = make([]byte, readBufSize)
		if err := l.openTLS(); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// now is the loop's clock: monotonic ns since New.
func (l *Loop) now() int64 { return l.poll.Now() }

// Send queues raw (a whole HTTP/1.1 request, kept by reference until its
// answer) and writes it at once on an idle connection if there is one.
// OnDone reports its outcome with tag from a later PollUntil, or from this
// call when it fails at once.
func (l *Loop) Send(raw []byte, tag uint64) {
	if l.closed {
		l.cfg.OnDone(tag, time.Time{}, ErrClosed)
		return
	}
	now := l.now()
	p := pending{raw: raw, tag: tag, since: now}
	switch {
	case l.lastSend == 0:
	case l.gap == 0:
		l.gap = float64(now - l.lastSend)
	default:
		l.gap += (float64(now-l.lastSend) - l.gap) / smoothing
	}
	l.lastSend = now
	if l.cfg.Timeout > 0 {
		p.deadline = now + int64(l.cfg.Timeout)
		l.checkAt = min(l.checkAt, p.deadline)
	}
	if n := len(l.idle); n > 0 && l.queue.Len() == 0 {
		c := l.idle[n-1]
		l.idle = l.idle[:n-1]
		l.start(c, p, now)
		return
	}
	l.queue.PushBack(p)
	l.grow()
}

// grow opens connections while requests wait and the cap allows, a few at
// a time: a burst of waiting requests after a stall of the server would
// otherwise open hundreds at once, each a connect on this goroutine and an
// accept on the server's, deepening the stall they answer (measured: a
// 20k QPS run's latency p99 went from 0.1 ms to 45 ms). The requests a
// busy connection frees are served first anyway.
//
// And only once the oldest waiting request has waited growAfter: every
// connection busy for an instant is the normal state of a fast server at a
// high rate, and answering each such instant with a connect grew a 50k QPS
// run to hundreds of connections whose connects and accepts stalled it
// (p99 45 ms, INVALID; the same run held to 32 connections: 0.47 ms). A
// backlog that lasts is a server slower than the connections can carry
// (Little's law), and gets more of them.
func (l *Loop) grow() {
	if l.queue.Len() == 0 {
		return
	}
	if l.open > 0 {
		if t := l.queue.Front().since + growAfter; t > l.now() {
			l.checkAt = min(l.checkAt, t)
			return
		}
	}
	for l.queue.Len() > l.connecting && l.connecting < maxDialing && l.open < min(l.cfg.MaxConns, l.needed()) {
		if err := l.dial(); err != nil {
			l.connErr = err
			if l.open == 0 {
				l.failQueue(err)
			}
			return
		}
	}
}

// needed is how many connections the load needs by Little's law: the send
// rate times the time a connection takes to answer, twice over for the
// bursts of a Poisson schedule, and a few more. A backlog on fewer
// connections than that is a server that answers more slowly than the
// connections can carry, and more connections serve it; a backlog on more
// is a server that cannot keep up with the load at all, and more
// connections would only cost it accepts and reads (measured at 50k QPS
// against a one-core server: a stall grew the pool to hundreds of
// connections and the run never recovered, INVALID, where 32 connections
// stayed VALID with a lateness p99 of 0.15 ms). Until answers have been
// timed, the cap alone bounds the pool.
func (l *Loop) needed() int {
	if l.answered < minTimed || l.gap <= 0 {
		return l.cfg.MaxConns
	}
	return int(math.Ceil(2*l.svc/l.gap)) + 4
}

// Outstanding is the number of requests sent or queued and not yet
// answered.
func (l *Loop) Outstanding() int { return l.busy + l.queue.Len() }

// Retries is how many requests were sent again on another connection
// because their write failed before any byte of them left: the server had
// reset the connection, and never saw them. A request that was written is
// never sent again.
func (l *Loop) Retries() uint64 { return l.retries }

// ResponseBudget is the bound on the JSON the connections keep at once,
// and its accounting (Config.MaxResponseBytesTotal).
func (l *Loop) ResponseBudget() *httpclient.Budget { return l.budget }

// GiveOwnP says the goroutine polling the loop has a P no other goroutine
// needs (one of a run's several issuers, or its one issuer beside a
// scraper: the runner raises GOMAXPROCS for them): the loop's long waits
// then block raw too rather than park on Go's poller (rawio.Poller.OwnP).
// Call it before the loop is polled.
func (l *Loop) GiveOwnP() { l.poll.OwnP = true }

// Conns is the number of connections open or being opened.
func (l *Loop) Conns() int { return l.open }

// Needed is the connection count Little's law gives for the load so far
// (see grow); MaxConns until enough answers have been timed.
func (l *Loop) Needed() int { return min(l.needed(), l.cfg.MaxConns) }

// PollUntil does the loop's I/O and delivers completions (OnDone) until t,
// until ctx is done, or until it has delivered at least one completion,
// whichever is first; it reports whether it delivered any. It polls the
// sockets at least once even when t has passed, so a caller that is behind
// still receives answers.
func (l *Loop) PollUntil(ctx context.Context, t time.Time) bool {
	return l.pollUntil(ctx, t, false)
}

// PollQuietUntil is PollUntil for a caller that waits for t, not for
// answers: a wait that parks does not end for answers that carry their
// receive timestamps; they are delivered when it ends (rawio.Poller.Wait,
// QuietLimit). Requests that wait for a connection, or a request that
// waits to be written, still end it.
func (l *Loop) PollQuietUntil(ctx context.Context, t time.Time) bool {
	return l.pollUntil(ctx, t, true)
}

func (l *Loop) pollUntil(ctx context.Context, t time.Time, quiet bool) bool {
	l.poll.Watch(ctx)
	due := l.poll.At(t)
	start := l.delivered
	polled := false
	for {
		now := l.now()
		if now >= l.checkAt {
			l.expire(now)
		}
		if l.delivered != start || l.poll.Cancelled() || (now >= due && polled) {
			return l.delivered != start
		}
		wake := min(due, l.checkAt)
		if now >= wake {
			wake = 0 // poll without waiting
		}
		// Only a park can be quiet (rawio.Poller.Wait): mayDefer's look
		// at the connections is spared on the short waits of high rates.
		q := quiet && wake-now > rawWaitLimit && l.mayDefer()
		if err := l.wait(wake, q); err != nil {
			return l.delivered != start
		}
		polled = true
	}
}

// mayDefer reports whether answers may wait for the end of a wait: they
// carry receive timestamps, and nothing waits for them but their own
// delivery (no request waits for a connection or to be written).
func (l *Loop) mayDefer() bool {
	if l.unstamped || l.queue.Len() > 0 {
		return false
	}
	for _, c := range l.slots {
		if c.out && c.state != stateClosed {
			return false
		}
	}
	return true
}

// wait waits until wake (rawio.Poller.Wait) and handles what is ready.
func (l *Loop) wait(wake int64, quiet bool) error {
	n, err := l.poll.Wait(wake, quiet)
	if err != nil {
		return err
	}
	l.handle(n)
	return nil
}

// handle acts on the first n events of the last wait.
func (l *Loop) handle(n int) {
	for i := range n {
		ev := l.poll.Events[i]
		if ev.Fd == wakeKey {
			l.handshaken()
			continue
		}
		if c := l.slots[ev.Fd]; c.gen == ev.Pad && c.state != stateClosed {
			l.event(c, ev.Events)
		}
	}
}

// deliver reports a request's outcome.
func (l *Loop) deliver(tag uint64, err error) { l.deliverAt(tag, time.Time{}, err) }

func (l *Loop) deliverAt(tag uint64, at time.Time, err error) {
	l.delivered++
	l.cfg.OnDone(tag, at, err)
}

// failQueue fails every waiting request: no connection can be opened.
func (l *Loop) failQueue(err error) {
	for l.queue.Len() > 0 {
		p := l.queue.PopFront()
		l.deliver(p.tag, fmt.Errorf("%w: connect: %w", kserve.ErrTransport, err))
	}
}

// expire fails the requests whose deadline passed, and finds the next one.
func (l *Loop) expire(now int64) {
	next := int64(never)
	for _, c := range l.slots {
		if c.state != stateBusy || c.req.deadline == 0 {
			continue
		}
		if c.req.deadline <= now {
			tag := c.req.tag
			l.busy--
			c.req = pending{}
			l.closeConn(c)
			l.deliver(tag, l.timeoutError())
			continue
		}
		next = min(next, c.req.deadline)
	}
	// deadline 0 is "none": expire also runs for grow's sake (checkAt).
	for l.queue.Len() > 0 && l.queue.Front().deadline != 0 && l.queue.Front().deadline <= now {
		p := l.queue.PopFront()
		l.deliver(p.tag, l.timeoutError())
	}
	for i := range l.queue.Len() {
		if d := (*l.queue.At(i)).deadline; d > 0 {
			next = min(next, d)
			break // deadlines are in queue order after the first
		}
	}
	l.checkAt = next
	l.grow()
}

func (l *Loop) timeoutError() error {
	return fmt.Errorf("%w: request timeout %v: %w", kserve.ErrTransport, l.cfg.Timeout, context.DeadlineExceeded)
}

// Preconnect opens connections until n are open (within MaxConns) and
// waits for them, bounded by ctx and the dial timeout.
func (l *Loop) Preconnect(ctx context.Context, n int) error {
	if l.closed {
		return ErrClosed
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.DialTimeout)
	defer cancel()
	l.connErr = nil
	for l.open < min(n, l.cfg.MaxConns) {
		if err := l.dial(); err != nil {
			return fmt.Errorf("%w: preconnect: %w", kserve.ErrTransport, err)
		}
	}
	for l.connecting > 0 {
		if err := ctx.Err(); err != nil {
			if l.handshaking() {
				return fmt.Errorf("%w: preconnect: TLS handshake with %s unfinished: %w", kserve.ErrTransport, l.cfg.Addr, err)
			}
			return fmt.Errorf("%w: preconnect: %w", kserve.ErrTransport, err)
		}
		l.PollUntil(ctx, time.Now().Add(10*time.Millisecond))
	}
	if l.connErr != nil {
		return fmt.Errorf("%w: preconnect: %w", kserve.ErrTransport, l.connErr)
	}
	return nil
}

// Close closes every connection and the loop's descriptors. Requests still
// outstanding are dropped without a callback: the caller has stopped
// listening.
func (l *Loop) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	l.closeTLS()
	for _, c := range l.slots {
		if c.state != stateClosed {
			unix.Close(c.fd)
			c.state = stateClosed
		}
	}
	l.poll.Close()
	return nil
}

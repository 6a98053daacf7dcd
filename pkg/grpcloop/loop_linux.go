//go:build linux

package grpcloop

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/netloadgen/netloadgen/internal/rawio"

	"github.com/netloadgen/netloadgen/kserve"
)

const (
	// readBufSize is one read's worth; the buffer also holds the carried
	// head of a frame cut by the previous read (at most one frame).
	readBufSize = 64 << 10
	maxEvents   = 128
	never       = math.MaxInt64
	maxDialing  = 4 // connects in progress at once
)

// Loop is the client. Send and PollUntil must be called from one goroutine
// at a time (the issuer's); nothing in it runs on another goroutine except
// the wake-up of a cancelled context.
type Loop struct {
	cfg  Config
	peer rawio.Peer

	poll rawio.Poller // the epoll set, its timer and wake-up, the loop's clock
	buf  []byte       // read buffer shared by every connection: one goroutine reads
	rx   rawio.Receiver

	slots    []*conn // by epoll key
	queue    fifo    // calls waiting for a stream
	free     []*stream
	active   int // calls on streams
	dirty    []*conn
	lazy     []*conn   // connections whose PING ACK waits for a call (ack_linux.go)
	lazyAt   int64     // when the oldest of those ACKs was due; 0: none
	inHandle bool      // events are being handled: writes wait for the end
	scratch  []pending // calls taken off streams, to deliver after

	checkAt int64 // the earliest call deadline that may have passed

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
		return nil, fmt.Errorf("grpcloop: resolve %q: %w", cfg.Addr, err)
	}
	l := &Loop{cfg: cfg, peer: peer, checkAt: never, buf: make([]byte, readBufSize+frameHeaderLen+defaultMaxFrame)}
	if err := l.poll.Open("grpcloop", maxEvents); err != nil {
		l.Close()
		return nil, err
	}
	l.poll.Slack = cfg.Slack
	return l, nil
}

// now is the loop's clock: monotonic ns since New.
func (l *Loop) now() int64 { return l.poll.Now() }

// Send starts the call req (kept by reference until it ends) on the
// connection with the fewest calls in flight, writing it at once, or
// queues it until a stream is free. OnDone reports its outcome with tag
// from a later PollUntil, or from this call when it fails at once.
func (l *Loop) Send(req *Request, tag uint64) {
	if l.closed {
		l.cfg.OnDone(tag, time.Time{}, ErrClosed)
		return
	}
	p := pending{req: req, tag: tag}
	if l.cfg.Timeout > 0 {
		p.deadline = l.now() + int64(l.cfg.Timeout)
		l.checkAt = min(l.checkAt, p.deadline)
	}
	if l.queue.Len() == 0 {
		if c := l.pick(); c != nil {
			l.start(c, p)
			return
		}
	}
	l.queue.PushBack(p)
	l.grow()
}

// Outstanding is the number of calls sent or queued and not yet ended.
func (l *Loop) Outstanding() int { return l.active + l.queue.Len() }

// Retries is how many calls were sent again because they provably never
// reached the server's application: it refused their stream or sent GOAWAY
// before processing them, or their connection failed before any frame of
// them was written. A call written on a connection the server then closed
// is never sent again.
func (l *Loop) Retries() uint64 { return l.retries }

// Conns is the number of connections open or being opened.
func (l *Loop) Conns() int {
	n := 0
	for _, c := range l.slots {
		if c.state != stateClosed {
			n++
		}
	}
	return n
}

// GiveOwnP says the goroutine polling the loop has a P no other goroutine
// needs (one of a run's several issuers, or its one issuer beside a
// scraper: the runner raises GOMAXPROCS for them): the loop's long waits
// then block raw too rather than park on Go's poller (rawio.Poller.OwnP).
// Call it before the loop is polled.
func (l *Loop) GiveOwnP() { l.poll.OwnP = true }

// Preconnect opens connections until n are open (within Conns) and waits
// until each has exchanged SETTINGS, bounded by ctx and the dial timeout.
func (l *Loop) Preconnect(ctx context.Context, n int) error {
	if l.closed {
		return ErrClosed
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.DialTimeout)
	defer cancel()
	l.connErr = nil
	for {
		live, _ := l.count()
		if live >= min(n, l.cfg.Conns) {
			break
		}
		if err := l.dial(); err != nil {
			return fmt.Errorf("%w: preconnect: %w", kserve.ErrTransport, err)
		}
	}
	for {
		if l.connErr != nil {
			return fmt.Errorf("%w: preconnect: %w", kserve.ErrTransport, l.connErr)
		}
		if _, opening := l.count(); opening == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: preconnect: %w", kserve.ErrTransport, err)
		}
		l.PollUntil(ctx, time.Now().Add(10*time.Millisecond))
	}
}

// Close closes every connection and the loop's descriptors. Calls still
// outstanding are dropped without a callback: the caller has stopped
// listening.
func (l *Loop) Close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	for _, c := range l.slots {
		l.closeConn(c)
	}
	l.poll.Close()
	return nil
}

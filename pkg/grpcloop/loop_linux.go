//go:build linux

package grpcloop

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netloadgen/netloadgen/kserve"
)

// Epoll keys that are not connections (a connection's key is its slot).
const (
	keyTimer = -1
	keyWake  = -2
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
	cfg    Config
	sa     unix.Sockaddr
	family int

	epfd, tfd, efd int
	events         []unix.EpollEvent
	// A long wait parks the goroutine on Go's poller until the epoll set
	// has events (an epoll fd is itself pollable), as httploop does.
	epf     *os.File
	epRaw   syscall.RawConn
	parked  func(fd uintptr) bool
	nReady  int
	errWait error
	buf     []byte // read buffer shared by every connection: one goroutine reads
	rx      rxMsg

	slots    []*conn // by epoll key
	queue    fifo    // calls waiting for a stream
	free     []*stream
	active   int // calls on streams
	dirty    []*conn
	inHandle bool      // events are being handled: writes wait for the end
	scratch  []pending // calls taken off streams, to deliver after

	base      time.Time // the loop's clock: ns since base
	clockBase int64     // CLOCK_MONOTONIC at base, for the timerfd
	armed     int64     // timerfd expiry on the loop's clock; 0: not armed
	spec      unix.ItimerSpec
	checkAt   int64 // the earliest call deadline that may have passed

	done      <-chan struct{} // the context being watched
	stopWatch func() bool

	delivered uint64
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
	ta, err := net.ResolveTCPAddr("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("grpcloop: resolve %q: %w", cfg.Addr, err)
	}
	l := &Loop{cfg: cfg, epfd: -1, tfd: -1, efd: -1, checkAt: never,
		events: make([]unix.EpollEvent, maxEvents), buf: make([]byte, readBufSize+frameHeaderLen+defaultMaxFrame)}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		l.sa, l.family = sa, unix.AF_INET
	} else {
		sa := &unix.SockaddrInet6{Port: ta.Port}
		copy(sa.Addr[:], ta.IP.To16())
		l.sa, l.family = sa, unix.AF_INET6
	}
	if err := l.setup(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

func (l *Loop) setup() error {
	var err error
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fmt.Errorf("grpcloop: epoll_create1: %w", err)
	}
	if err := unix.SetNonblock(l.epfd, true); err != nil {
		return fmt.Errorf("grpcloop: epoll fd: %w", err)
	}
	l.epf = os.NewFile(uintptr(l.epfd), "grpcloop-epoll")
	if l.epRaw, err = l.epf.SyscallConn(); err != nil {
		return fmt.Errorf("grpcloop: epoll fd: %w", err)
	}
	// Made once: a closure per wait would allocate.
	l.parked = func(fd uintptr) bool {
		l.nReady, l.errWait = epollWait(int(fd), l.events)
		if errors.Is(l.errWait, unix.EINTR) {
			l.errWait = nil
		}
		return l.nReady > 0 || l.errWait != nil
	}
	if l.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK); err != nil {
		return fmt.Errorf("grpcloop: timerfd_create: %w", err)
	}
	if l.efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return fmt.Errorf("grpcloop: eventfd: %w", err)
	}
	// Edge-triggered and never read: each expiry wakes the wait once.
	if err := l.ctl(unix.EPOLL_CTL_ADD, l.tfd, unix.EPOLLIN|unix.EPOLLET, keyTimer, 0); err != nil {
		return err
	}
	if err := l.ctl(unix.EPOLL_CTL_ADD, l.efd, unix.EPOLLIN, keyWake, 0); err != nil {
		return err
	}
	var ts unix.Timespec
	l.base = time.Now()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return fmt.Errorf("grpcloop: clock_gettime: %w", err)
	}
	l.clockBase = ts.Nano()
	return nil
}

func (l *Loop) ctl(op, fd int, events uint32, key, gen int32) error {
	ev := unix.EpollEvent{Events: events, Fd: key, Pad: gen}
	if err := unix.EpollCtl(l.epfd, op, fd, &ev); err != nil {
		return fmt.Errorf("grpcloop: epoll_ctl: %w", err)
	}
	return nil
}

// now is the loop's clock: monotonic ns since New.
func (l *Loop) now() int64 { return int64(time.Since(l.base)) }

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
	if l.queue.len() == 0 {
		if c := l.pick(); c != nil {
			l.start(c, p)
			return
		}
	}
	l.queue.pushBack(p)
	l.grow()
}

// pick is the usable connection with the fewest streams; nil if none.
func (l *Loop) pick() *conn {
	var best *conn
	for _, c := range l.slots {
		if c.usable() && (best == nil || c.streams.n < best.streams.n) {
			best = c
		}
	}
	return best
}

// dispatch starts waiting calls on free streams, and opens connections
// when they still wait.
func (l *Loop) dispatch() {
	for l.queue.len() > 0 && !l.closed {
		c := l.pick()
		if c == nil {
			break
		}
		l.start(c, l.queue.popFront())
	}
	l.grow()
}

// grow opens connections, up to Conns that take new streams, while calls
// wait, a few at a time.
func (l *Loop) grow() {
	if l.queue.len() == 0 || l.closed {
		return
	}
	live, opening := l.count()
	for live < l.cfg.Conns && opening < maxDialing {
		if err := l.dial(); err != nil {
			l.connErr = err
			if live == 0 {
				l.failQueue(err)
			}
			return
		}
		live++
		opening++
	}
}

// count is the connections open or opening that will take new streams, and
// those not ready yet.
func (l *Loop) count() (live, opening int) {
	for _, c := range l.slots {
		if c.state == stateClosed || c.draining {
			continue
		}
		live++
		if c.state != stateReady {
			opening++
		}
	}
	return live, opening
}

// start opens a stream on c for p and queues its frames.
func (l *Loop) start(c *conn, p pending) {
	var s *stream
	if n := len(l.free); n > 0 {
		s = l.free[n-1]
		l.free = l.free[:n-1]
	} else {
		s = new(stream)
	}
	s.id, s.p, s.sent, s.sendWin, s.recvd, s.blocked = c.nextID, p, 0, c.peerWin, 0, false
	s.resp.reset()
	c.nextID += 2
	if c.nextID > maxStreamID {
		c.draining = true // ids used up: a fresh connection takes over
	}
	c.streams.put(s)
	l.active++
	req := p.req
	body := int64(len(req.body))
	off := len(c.out)
	if req.frames != nil && body <= c.sendWin && body <= s.sendWin {
		// The common case: the whole call in one copy.
		c.out = append(c.out, req.frames...)
		putStream(c.out[off:], s.id)
		putStream(c.out[off+len(req.headers):], s.id)
		c.sendWin -= body
		s.sendWin -= body
		s.sent = len(req.body)
	} else {
		c.out = append(c.out, req.headers...)
		putStream(c.out[off:], s.id)
		l.pump(c, s)
	}
	l.flushLater(c)
}

// pump queues as much of s's message as the windows and the server's frame
// size allow; the rest waits for WINDOW_UPDATE.
func (l *Loop) pump(c *conn, s *stream) {
	body := s.p.req.body
	for s.sent < len(body) {
		n := int(min(int64(len(body)-s.sent), int64(c.maxFrame), c.sendWin, s.sendWin))
		if n <= 0 {
			if !s.blocked {
				s.blocked = true
				c.blocked = append(c.blocked, s)
			}
			return
		}
		var flags byte
		if s.sent+n == len(body) {
			flags = flagEndStream
		}
		c.out = appendFrameHeader(c.out, n, frameData, flags, s.id)
		c.out = append(c.out, body[s.sent:s.sent+n]...)
		s.sent += n
		c.sendWin -= int64(n)
		s.sendWin -= int64(n)
	}
}

// unblock resumes the streams that waited for a window, in order.
func (l *Loop) unblock(c *conn) {
	if len(c.blocked) == 0 || c.state == stateClosed {
		return
	}
	waiting := c.blocked
	c.blocked = c.spare[:0]
	for i, s := range waiting {
		waiting[i] = nil
		if s.blocked {
			s.blocked = false
			l.pump(c, s)
		}
	}
	c.spare = waiting[:0]
	l.flushLater(c)
}

// removeStream takes s off c and returns its call; s goes back to the pool.
func (l *Loop) removeStream(c *conn, s *stream) pending {
	c.streams.remove(s)
	l.active--
	if s.blocked {
		for i, b := range c.blocked {
			if b == s {
				c.blocked = append(c.blocked[:i], c.blocked[i+1:]...)
				break
			}
		}
		s.blocked = false
	}
	p := s.p
	s.p = pending{}
	l.free = append(l.free, s)
	return p
}

// finish reports a stream's answer, timed by the read that completed it.
func (l *Loop) finish(c *conn, s *stream) {
	err := s.resp.result()
	var at time.Time
	if err == nil {
		at = arrival(c.rxNs)
	}
	p := l.removeStream(c, s)
	l.deliverAt(p.tag, at, err)
	l.streamEnded(c)
}

// streamEnded closes a draining connection once its last stream ends and
// hands the freed stream to a waiting call.
func (l *Loop) streamEnded(c *conn) {
	if c.draining && c.streams.n == 0 {
		l.closeConn(c)
	}
	if l.queue.len() > 0 {
		l.dispatch()
	}
}

// retryOrFail sends p again, first in line, unless it was sent again once
// already.
func (l *Loop) retryOrFail(p pending, err error) {
	if p.retried || l.closed {
		l.deliver(p.tag, err)
		return
	}
	p.retried = true
	l.retries++
	l.queue.pushFront(p)
}

func (l *Loop) deliver(tag uint64, err error) { l.deliverAt(tag, time.Time{}, err) }

func (l *Loop) deliverAt(tag uint64, at time.Time, err error) {
	l.delivered++
	l.cfg.OnDone(tag, at, err)
}

// failQueue fails every waiting call: no connection can be opened.
func (l *Loop) failQueue(err error) {
	for l.queue.len() > 0 {
		p := l.queue.popFront()
		l.deliver(p.tag, fmt.Errorf("%w: connect: %w", kserve.ErrTransport, err))
	}
}

// expire fails the calls whose deadline passed (cancelling their streams)
// and finds the next deadline.
func (l *Loop) expire(now int64) {
	next := int64(never)
	was := l.inHandle
	l.inHandle = true // cancellations are written below, after the scan
	l.scratch = l.scratch[:0]
	for _, c := range l.slots {
		if c.state == stateClosed {
			continue
		}
		cancelled := false
		for _, s := range c.streams.tab {
			if s == nil || s.p.deadline == 0 {
				continue
			}
			if s.p.deadline <= now {
				c.out = appendRSTStream(c.out, s.id, errCodeCancel)
				cancelled = true
				l.scratch = append(l.scratch, l.removeStream(c, s))
				continue
			}
			next = min(next, s.p.deadline)
		}
		if cancelled {
			if c.draining && c.streams.n == 0 {
				l.closeConn(c)
			} else {
				l.flushLater(c)
			}
		}
	}
	for l.queue.len() > 0 && l.queue.at(0).deadline != 0 && l.queue.at(0).deadline <= now {
		l.scratch = append(l.scratch, l.queue.popFront())
	}
	for i := range l.queue.len() {
		if d := l.queue.at(i).deadline; d > 0 {
			next = min(next, d)
			break // deadlines are in queue order after the first (a retry's is older still)
		}
	}
	l.checkAt = next
	for i := range l.scratch {
		p := l.scratch[i]
		l.scratch[i] = pending{}
		l.deliver(p.tag, l.timeoutError())
	}
	l.scratch = l.scratch[:0]
	l.dispatch()
	l.inHandle = was
	if !was {
		l.flush()
	}
}

func (l *Loop) timeoutError() error {
	return fmt.Errorf("%w: request timeout %v: %w", kserve.ErrTransport, l.cfg.Timeout, context.DeadlineExceeded)
}

// Outstanding is the number of calls sent or queued and not yet ended.
func (l *Loop) Outstanding() int { return l.active + l.queue.len() }

// Retries is how many calls were sent again because the server refused
// their stream or sent GOAWAY before processing them.
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

// PollUntil does the loop's I/O and delivers completions (OnDone) until t,
// until ctx is done, or until it has delivered at least one completion,
// whichever is first; it reports whether it delivered any. It polls the
// sockets at least once even when t has passed.
func (l *Loop) PollUntil(ctx context.Context, t time.Time) bool {
	if l.closed {
		return false // its descriptors are gone: nothing to wait on
	}
	l.watch(ctx)
	due := int64(t.Sub(l.base))
	start := l.delivered
	polled := false
	for {
		now := l.now()
		if now >= l.checkAt {
			l.expire(now)
		}
		if l.delivered != start || l.cancelled() || (now >= due && polled) || l.closed {
			return l.delivered != start
		}
		wake := min(due, l.checkAt)
		if now >= wake {
			wake = 0 // poll without waiting
		}
		if err := l.wait(wake); err != nil {
			return l.delivered != start
		}
		polled = true
	}
}

func (l *Loop) cancelled() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// watch makes ctx's end wake a wait in progress; registered once per
// context, since callers poll with the same one for long stretches.
func (l *Loop) watch(ctx context.Context) {
	done := ctx.Done()
	if done == l.done && (l.stopWatch != nil || done == nil) {
		return
	}
	if l.stopWatch != nil {
		l.stopWatch()
		l.stopWatch = nil
	}
	l.done = done
	if done != nil {
		efd := l.efd
		l.stopWatch = context.AfterFunc(ctx, func() {
			one := [8]byte{1}
			_, _ = unix.Write(efd, one[:])
		})
	}
}

// wait blocks until an event or the loop-clock time wake (0: do not block)
// and handles what it returns. A short wait sleeps on the clock and then
// reads whatever the sockets have (one wake-up per due time, not per
// answer; receive timestamps keep the answers' times); a long one parks on
// Go's poller with the timerfd ending it (see httploop, where both were
// measured).
func (l *Loop) wait(wake int64) error {
	var n int
	var err error
	switch {
	case wake <= 0:
		n, err = epollWait(l.epfd, l.events)
	case wake-l.now() <= rawWaitLimit:
		l.spec.Value = unix.NsecToTimespec(l.clockBase + wake)
		if err := clockSleepUntil(&l.spec.Value); err != nil {
			return fmt.Errorf("grpcloop: clock_nanosleep: %w", err)
		}
		n, err = epollWait(l.epfd, l.events)
	default:
		if wake != l.armed {
			l.spec.Value = unix.NsecToTimespec(l.clockBase + wake)
			if err := unix.TimerfdSettime(l.tfd, unix.TFD_TIMER_ABSTIME, &l.spec, nil); err != nil {
				return fmt.Errorf("grpcloop: timerfd_settime: %w", err)
			}
			l.armed = wake
		}
		if rerr := l.epRaw.Read(l.parked); rerr != nil {
			return fmt.Errorf("grpcloop: wait: %w", rerr)
		}
		n, err = l.nReady, l.errWait
	}
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return nil
		}
		return fmt.Errorf("grpcloop: epoll_wait: %w", err)
	}
	l.handle(n)
	return nil
}

// handle acts on the first n events of the last wait, then writes what
// they produced: acknowledgements, window updates, follow-up calls.
func (l *Loop) handle(n int) {
	l.inHandle = true
	for i := range n {
		ev := l.events[i]
		switch ev.Fd {
		case keyTimer:
			l.armed = 0
		case keyWake:
			var b [8]byte
			_, _ = unix.Read(l.efd, b[:])
		default:
			if c := l.slots[ev.Fd]; c.gen == ev.Pad && c.state != stateClosed {
				l.event(c, ev.Events)
			}
		}
	}
	l.flush()
	l.inHandle = false
}

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
	if l.stopWatch != nil {
		l.stopWatch()
	}
	for _, c := range l.slots {
		l.closeConn(c)
	}
	for _, fd := range []int{l.tfd, l.efd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	if l.epf != nil {
		l.epf.Close()
	} else if l.epfd >= 0 {
		unix.Close(l.epfd)
	}
	return nil
}

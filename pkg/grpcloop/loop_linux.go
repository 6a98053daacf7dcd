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

	"github.com/netloadgen/netloadgen/internal/rawio"

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
	rx      rawio.Receiver

	slots    []*conn // by epoll key
	queue    fifo    // calls waiting for a stream
	free     []*stream
	active   int // calls on streams
	dirty    []*conn
	lazy     []*conn   // connections whose PING ACK waits for a call (ack_linux.go)
	lazyAt   int64     // when the oldest of those ACKs was due; 0: none
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
		l.nReady, l.errWait = rawio.EpollWait(int(fd), l.events)
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

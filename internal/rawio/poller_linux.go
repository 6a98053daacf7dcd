//go:build linux

package rawio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Poller is an event loop's waiting: an epoll set of the loop's sockets,
// waited on raw for a short wait; for a long one, a second set (the alarm)
// holding a timerfd, an eventfd and the sockets' set, parked on Go's poller.
// A watched context's end wakes a parked wait through the eventfd. One
// goroutine uses it at a time.
type Poller struct {
	name           string
	epfd, tfd, efd int
	// Events receives what Wait found ready: Events[:n].
	Events []unix.EpollEvent
	// Seen is when the last Wait that found events returned: the "now" of
	// Arrival for every answer that wait found.
	Seen time.Time
	// A long wait parks the goroutine on Go's poller until the alarm set has
	// events (an epoll fd is itself pollable): the thread then serves other
	// goroutines or sleeps in the runtime's own epoll, with no hand-off.
	// Only the alarm is known to Go's poller: the sockets' set is in it
	// while a wait is for answers too, and out (its events masked) while a
	// quiet wait is for the time alone. alarmF owns the alarm's fd.
	alarm    int
	alarmF   *os.File
	alarmRaw syscall.RawConn
	alarmEvs [3]unix.EpollEvent
	sockets  bool // the sockets' set wakes a park (it is unmasked in the alarm)
	parked   func(fd uintptr) bool
	errWait  error

	// Slack is the timer slack of a short wait's sleep (0: the thread's
	// own, 50 µs unless changed). The kernel may end the sleep anywhere up
	// to Slack after the wake time, and uses that to serve several timers
	// with one wake-up; a loop that issues everything due when it wakes
	// thus sends more requests per wake-up, and the server gets them in
	// fewer bursts. A wake-up costs several µs of CPU on these VMs (the
	// sleep, the switch from idle, the server's wake on the first request):
	// at 20,000 QPS, 200 µs instead of 50 cut the wake-ups from 7,000 to
	// 2,900 a second and the CPU per request by 1–2 µs, for an issue
	// lateness p99 of ~0.3 ms instead of ~0.1 (bench/RESULTS.md). Long
	// waits, on the timerfd, have no slack.
	Slack time.Duration
	// OwnP makes a long wait block raw too, on the alarm set itself, rather
	// than park: for a goroutine that has a P no other goroutine needs (one
	// of a run's several issuers, each on a thread locked to it, or a run's
	// one issuer beside a scraper; the runner raises GOMAXPROCS to give
	// each one). A park wakes through the
	// runtime: the thread that polls, then a futex wake of the locked
	// thread, a chain two issuer threads on one core delay for each other
	// (two issuers on one core at 20,000 QPS: lateness p99 5–144 ms
	// parked, 0.65–0.91 ms blocking raw; bench/RESULTS.md, "Issuers on
	// one host"). Without a spare P, a blocked wait would hold the one P
	// the rest of the process needs until the runtime preempts it (10 ms).
	OwnP      bool
	slack0    uintptr   // the thread's slack, restored after a sleep with Slack
	base      time.Time // the loop's clock: ns since base
	clockBase int64     // CLOCK_MONOTONIC at base, for the timers
	armed     int64     // timerfd expiry on the loop's clock; 0: not armed
	spec      unix.ItimerSpec

	done      <-chan struct{} // the context being watched
	stopWatch func() bool
	woke      chan struct{} // closed once the watch's wake-up is written
}

// The alarm's events: which of its three descriptors is ready.
const (
	alarmTimer = iota + 1
	alarmWake
	alarmSockets
)

// Open sets the poller up, name prefixing its errors, with room for
// nEvents events per wait. A Poller that failed to open can still be
// closed.
func (p *Poller) Open(name string, nEvents int) error {
	p.name, p.epfd, p.tfd, p.efd, p.alarm = name, -1, -1, -1, -1
	p.Events = make([]unix.EpollEvent, nEvents)
	var err error
	if p.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fmt.Errorf("%s: epoll_create1: %w", name, err)
	}
	if p.alarm, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fmt.Errorf("%s: epoll_create1: %w", name, err)
	}
	if err := unix.SetNonblock(p.alarm, true); err != nil {
		return fmt.Errorf("%s: epoll fd: %w", name, err)
	}
	p.alarmF = os.NewFile(uintptr(p.alarm), name+"-alarm")
	if p.alarmRaw, err = p.alarmF.SyscallConn(); err != nil {
		return fmt.Errorf("%s: epoll fd: %w", name, err)
	}
	// Made once: a closure per wait would allocate.
	p.parked = func(fd uintptr) bool {
		n, err := EpollWait(int(fd), p.alarmEvs[:])
		return p.alarmed(n, err)
	}
	// The long wait is a timerfd rather than epoll_wait's timeout:
	// epoll_wait rounds to milliseconds and adds the thread's timer slack
	// (50 µs by default); a timerfd expires on the kernel's high-resolution
	// timer.
	if p.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK); err != nil {
		return fmt.Errorf("%s: timerfd_create: %w", name, err)
	}
	if p.efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return fmt.Errorf("%s: eventfd: %w", name, err)
	}
	// The timer is edge-triggered and never read: each expiry wakes the
	// wait once, and re-arming needs one syscall, not two.
	for _, a := range []struct {
		fd     int
		events uint32
		key    int32
	}{
		{p.tfd, unix.EPOLLIN | unix.EPOLLET, alarmTimer},
		{p.efd, unix.EPOLLIN, alarmWake},
		{p.epfd, unix.EPOLLIN, alarmSockets},
	} {
		ev := unix.EpollEvent{Events: a.events, Fd: a.key}
		if err := unix.EpollCtl(p.alarm, unix.EPOLL_CTL_ADD, a.fd, &ev); err != nil {
			return fmt.Errorf("%s: epoll_ctl: %w", name, err)
		}
	}
	p.sockets = true
	// Threads inherit the slack: this one's is every thread's, unless
	// something set its own.
	if v, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil && v > 0 {
		p.slack0 = uintptr(v)
	}
	var ts unix.Timespec
	p.base = time.Now()
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return fmt.Errorf("%s: clock_gettime: %w", name, err)
	}
	p.clockBase = ts.Nano()
	return nil
}

// Ctl adds, changes or removes fd in the epoll set; its events carry key
// and gen (a slot and its generation).
func (p *Poller) Ctl(op, fd int, events uint32, key, gen int32) error {
	ev := unix.EpollEvent{Events: events, Fd: key, Pad: gen}
	if err := unix.EpollCtl(p.epfd, op, fd, &ev); err != nil {
		return fmt.Errorf("%s: epoll_ctl: %w", p.name, err)
	}
	return nil
}

// Now is the loop's clock: monotonic ns since Open.
func (p *Poller) Now() int64 { return int64(time.Since(p.base)) }

// At is t on the loop's clock.
func (p *Poller) At(t time.Time) int64 { return int64(t.Sub(p.base)) }

// QuietLimit is the longest a quiet wait holds answers back: a longer one
// wakes for them as they come. Arrival trusts a receive timestamp up to a
// second old, and live views (progress, metrics) should not lag by more.
const QuietLimit = 100 * time.Millisecond

// Wait waits until wake on the loop's clock (0 or less: not at all) and
// returns how many events are ready in Events. A wait up to WaitLimit is a
// raw sleep, then a look at what is ready: answers are not woken for, as
// each would cost a wake-up of its own (a context switch, and on a VM an
// interrupt), and receive timestamps keep their times exact; the sleep's
// timer slack (50 µs by default) lets the kernel wake once for close due
// times, a lateness charged to the latency as any is. A longer wait parks
// on Go's poller (with OwnP, blocks raw on the same descriptors) until the
// timerfd fires, the watched context ends, or, unless quiet, something is
// ready. A quiet wait (up to QuietLimit) is one
// for a due time by a caller whose answers carry receive timestamps: it
// leaves answers for the wake, as a short wait does, which at 100 QPS saved
// one wake-up in two and 15% of the CPU (bench/RESULTS.md). (Ending a park
// early and waiting the rest raw, or a read deadline as a second alarm,
// each cost a second wake-up per due time: 100 QPS went from 1.4–1.7% to
// 2.1% of a core, and did not lower the issue lateness.)
func (p *Poller) Wait(wake int64, quiet bool) (int, error) {
	if wake > 0 {
		var err error
		if left := wake - p.Now(); left <= int64(WaitLimit) {
			p.spec.Value = unix.NsecToTimespec(p.clockBase + wake)
			err = p.sleep()
		} else {
			err = p.park(wake, !quiet || left > int64(QuietLimit))
		}
		if err != nil {
			return 0, err
		}
	}
	n, err := EpollWait(p.epfd, p.Events)
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return 0, nil
		}
		return 0, fmt.Errorf("%s: epoll_wait: %w", p.name, err)
	}
	if n > 0 {
		p.Seen = time.Now()
	}
	return n, nil
}

// alarmed takes in what a wait on the alarm set found (n events, or err)
// and reports whether the wait is over; an error is kept in errWait.
func (p *Poller) alarmed(n int, err error) bool {
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return false
		}
		p.errWait = err
		return true
	}
	for _, ev := range p.alarmEvs[:n] {
		switch ev.Fd {
		case alarmTimer:
			p.armed = 0
		case alarmWake:
			var b [8]byte
			_, _ = unix.Read(p.efd, b[:])
		}
	}
	return n > 0
}

// park waits on Go's poller (or, with OwnP, in a raw epoll_pwait) until the
// timer fires at wake, the watched context ends, or, if sockets, a socket
// is ready.
func (p *Poller) park(wake int64, sockets bool) error {
	if wake != p.armed {
		p.spec.Value = unix.NsecToTimespec(p.clockBase + wake)
		if err := unix.TimerfdSettime(p.tfd, unix.TFD_TIMER_ABSTIME, &p.spec, nil); err != nil {
			return fmt.Errorf("%s: timerfd_settime: %w", p.name, err)
		}
		p.armed = wake
	}
	if sockets != p.sockets {
		// Masked, the sockets' set stays in the alarm and reports nothing.
		ev := unix.EpollEvent{Fd: alarmSockets}
		if sockets {
			ev.Events = unix.EPOLLIN
		}
		if err := unix.EpollCtl(p.alarm, unix.EPOLL_CTL_MOD, p.epfd, &ev); err != nil {
			return fmt.Errorf("%s: epoll_ctl: %w", p.name, err)
		}
		p.sockets = sockets
	}
	p.errWait = nil
	if p.OwnP {
		// A signal (the runtime's preemption, 10 ms into a long wait)
		// ends the wait with EINTR; the next call is where the goroutine
		// is preempted, and the wait goes on after it.
		for !p.alarmed(EpollBlock(p.alarm, p.alarmEvs[:])) {
		}
	} else if err := p.alarmRaw.Read(p.parked); err != nil {
		return fmt.Errorf("%s: wait: %w", p.name, err)
	}
	if p.errWait != nil {
		return fmt.Errorf("%s: epoll_wait: %w", p.name, p.errWait)
	}
	return nil
}

// sleep sleeps until p.spec.Value with the poller's slack. The slack is a
// property of the thread, which the goroutine may change between waits and
// which other goroutines use after it: it is set for the sleep and put
// back after: two system calls per wake-up (a raw system call is ~0.15 µs
// here; the pair was 0.9% of a 20k QPS run's CPU) against the wake-ups
// the slack saves.
func (p *Poller) sleep() error {
	set := p.Slack > 0 && p.slack0 > 0
	if set {
		_ = SetTimerSlack(uintptr(p.Slack))
	}
	err := SleepUntil(&p.spec.Value)
	if set {
		_ = SetTimerSlack(p.slack0)
	}
	if err != nil {
		return fmt.Errorf("%s: clock_nanosleep: %w", p.name, err)
	}
	return nil
}

// Watch makes the end of ctx wake a wait (through the eventfd).
func (p *Poller) Watch(ctx context.Context) {
	done := ctx.Done()
	if done == p.done && (p.stopWatch != nil || done == nil) {
		return
	}
	if p.stopWatch != nil {
		if !p.stopWatch() {
			// The old context ended and woke the eventfd: drained, that
			// wake-up is not the new one's. Its write may still be on its
			// way (AfterFunc runs it on a goroutine of its own): drained
			// before it lands, it would end the next wait at once (a quiet
			// wait of TestQuietWaitLeavesAnswersForItsEnd, under -race,
			// after Preconnect's context was cancelled).
			<-p.woke
			var b [8]byte
			_, _ = unix.Read(p.efd, b[:])
		}
		p.stopWatch = nil
	}
	p.done = done
	if done != nil {
		efd, woke := p.efd, make(chan struct{})
		p.woke = woke
		p.stopWatch = context.AfterFunc(ctx, func() {
			one := [8]byte{1}
			_, _ = unix.Write(efd, one[:])
			close(woke)
		})
	}
}

// Cancelled reports whether the watched context has ended.
func (p *Poller) Cancelled() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Close stops the watch and closes the poller's descriptors (not the
// loop's sockets).
func (p *Poller) Close() {
	if p.stopWatch != nil {
		if !p.stopWatch() {
			<-p.woke // its write lands before the eventfd is closed
		}
		p.stopWatch = nil
	}
	for _, fd := range []int{p.tfd, p.efd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	p.tfd, p.efd = -1, -1
	if p.alarmF != nil {
		p.alarmF.Close()
		p.alarmF = nil
	} else if p.alarm >= 0 {
		unix.Close(p.alarm)
	}
	p.alarm = -1
	if p.epfd >= 0 {
		unix.Close(p.epfd)
	}
	p.epfd = -1
}

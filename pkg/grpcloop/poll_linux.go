//go:build linux

package grpcloop

// This file is the loop's waiting: until a due time, a deadline, an
// answer or the end of the caller's context.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netloadgen/netloadgen/internal/rawio"
)

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
		if l.lazyAt != 0 {
			if wake-now > ackDelay || now-l.lazyAt >= ackDelay {
				l.flushLazy()
				continue // a failed write may have delivered
			}
			wake = min(wake, l.lazyAt+ackDelay)
		}
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
		n, err = rawio.EpollWait(l.epfd, l.events)
	case wake-l.now() <= rawWaitLimit:
		l.spec.Value = unix.NsecToTimespec(l.clockBase + wake)
		if err := rawio.SleepUntil(&l.spec.Value); err != nil {
			return fmt.Errorf("grpcloop: clock_nanosleep: %w", err)
		}
		n, err = rawio.EpollWait(l.epfd, l.events)
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

//go:build linux

package grpcloop

// This file is the loop's waiting: until a due time, a deadline, an
// answer or the end of the caller's context.

import (
	"context"
	"time"
)

// PollUntil does the loop's I/O and delivers completions (OnDone) until t,
// until ctx is done, or until it has delivered at least one completion,
// whichever is first; it reports whether it delivered any. It polls the
// sockets at least once even when t has passed.
func (l *Loop) PollUntil(ctx context.Context, t time.Time) bool {
	if l.closed {
		return false // its descriptors are gone: nothing to wait on
	}
	l.poll.Watch(ctx)
	due := l.poll.At(t)
	start := l.delivered
	polled := false
	for {
		now := l.now()
		if now >= l.checkAt {
			l.expire(now)
		}
		if l.delivered != start || l.poll.Cancelled() || (now >= due && polled) || l.closed {
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

// wait waits until wake (rawio.Poller.Wait) and handles what is ready.
func (l *Loop) wait(wake int64) error {
	n, err := l.poll.Wait(wake)
	if err != nil {
		return err
	}
	l.handle(n)
	return nil
}

// handle acts on the first n events of the last wait, then writes what
// they produced: acknowledgements, window updates, follow-up calls.
func (l *Loop) handle(n int) {
	l.inHandle = true
	for i := range n {
		ev := l.poll.Events[i]
		if l.poll.Own(ev) {
			continue
		}
		if c := l.slots[ev.Fd]; c.gen == ev.Pad && c.state != stateClosed {
			l.event(c, ev.Events)
		}
	}
	l.flush()
	l.inHandle = false
}

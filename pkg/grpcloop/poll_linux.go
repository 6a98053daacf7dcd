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
	return l.pollUntil(ctx, t, false)
}

// PollQuietUntil is PollUntil for a caller that waits for t, not for
// answers: a wait that parks does not end for answers that carry their
// receive timestamps; they are delivered when it ends (rawio.Poller.Wait,
// QuietLimit). Only while no connection carries more than one call: a read
// that takes several answers times them all by its last bytes, so those
// are read as they come. Calls that wait for a stream, a send window or a
// full socket still end it.
func (l *Loop) PollQuietUntil(ctx context.Context, t time.Time) bool {
	return l.pollUntil(ctx, t, true)
}

func (l *Loop) pollUntil(ctx context.Context, t time.Time, quiet bool) bool {
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
		// Only a park can be quiet (rawio.Poller.Wait): mayDefer's look
		// at the connections is spared on the short waits of high rates.
		q := quiet && wake-now > rawWaitLimit && l.mayDefer()
		if err := l.wait(wake, q); err != nil {
			return l.delivered != start
		}
		polled = true
	}
}

// mayDefer reports whether answers may wait for the end of a wait (see
// PollQuietUntil).
func (l *Loop) mayDefer() bool {
	if l.unstamped || l.queue.Len() > 0 {
		return false
	}
	for _, c := range l.slots {
		if c.state != stateClosed && (c.streams.n > 1 || len(c.blocked) > 0 || c.wantOut) {
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

// handle acts on the first n events of the last wait, then writes what
// they produced: acknowledgements, window updates, follow-up calls.
func (l *Loop) handle(n int) {
	l.inHandle = true
	for i := range n {
		ev := l.poll.Events[i]
		if c := l.slots[ev.Fd]; c.gen == ev.Pad && c.state != stateClosed {
			l.event(c, ev.Events)
		}
	}
	l.flush()
	l.inHandle = false
}

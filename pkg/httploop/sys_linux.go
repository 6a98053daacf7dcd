//go:build linux

package httploop

import "github.com/netloadgen/netloadgen/internal/rawio"

// The loop's hot system calls are raw (internal/rawio says why); a wait is
// raw only up to rawWaitLimit, a longer one parks on Go's poller (wait).
const rawWaitLimit = int64(rawio.WaitLimit)

// growAfter is how long a request waits for a busy connection before the
// loop opens another (Loop.grow).
const growAfter = 500_000 // ns

// smoothing is the weight (1/smoothing) of a new sample in the loop's
// running means of the send gap and the answer time: some hundreds of
// requests, so that a stall of a few milliseconds at tens of thousands of
// QPS moves the connection count a little, not to the cap.
const smoothing = 256

// riseWindow is the time in which the loop's estimate of the server's
// answer time may at most double (Loop.timed).
const riseWindow = 100_000_000 // ns

// minTimed is how many answers are timed before Little's law caps the
// pool.
const minTimed = 64

// recv reads into the loop's buffer and notes the kernel's receive
// timestamp of the data in c.rxNs.
func (l *Loop) recv(c *conn) (int, error) {
	n, rx, err := l.rx.Recv(c.fd, l.buf)
	if err != nil {
		return 0, err
	}
	if rx != 0 {
		c.rxNs = rx
	}
	return n, nil
}

//go:build linux

package httploop

import "github.com/netloadgen/netloadgen/internal/rawio"

// The loop's hot system calls are raw (internal/rawio says why); a wait is
// raw only up to rawWaitLimit, a longer one parks on Go's poller (wait).
const rawWaitLimit = int64(rawio.WaitLimit)

// growAfter is how long a request waits for a busy connection before the
// loop opens another (Loop.grow).
const growAfter = 500_000 // ns

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

package scrape

import (
	"runtime"
	"syscall"
)

// lowPriority runs the calling goroutine, a scrape's own, on a thread of
// its own at nice 19 until it ends: the kernel then lets the run's issuer
// and clients, at the process's priority, take the core first whenever
// both want it (weight 15 against 1024), which matters when the run is
// pinned to one core and a scrape parses megabytes. The thread is never
// unlocked, so it ends with the goroutine and its niceness with it.
func lowPriority() {
	runtime.LockOSThread()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19) // best effort: at worst, the process's priority
}

// scrapeRcvBuf is a scrape connection's receive buffer (the kernel
// doubles it): the most a server can send ahead of the paced reads. Set,
// it also turns off the kernel's autotuning, which would grow it to
// megabytes.
const scrapeRcvBuf = readChunk

// smallWindow gives a scrape's socket a small receive buffer before it
// connects (the window scale is agreed then), so that the server sends a
// body only as fast as paced reads it.
func smallWindow(_, _ string, c syscall.RawConn) error {
	var err error
	if cerr := c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, scrapeRcvBuf)
	}); cerr != nil {
		return cerr
	}
	return err
}

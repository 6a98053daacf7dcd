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

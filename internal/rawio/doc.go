// Package rawio holds the system calls the event-loop clients (pkg/httploop,
// pkg/grpcloop) make on their hot path, made raw. A Go system call
// (unix.Read, EpollWait) tells the scheduler the thread may block; after
// 20 µs in it sysmon hands the goroutine's P to another thread (a futex
// wake-up, and a thread that spins and sleeps again), and the goroutine must
// win a P back when the call returns. At tens of thousands of calls per
// second that hand-off cost more than the I/O (measured: ~6.5 futex calls
// per request). Reads and writes here never block (non-blocking sockets);
// a raw wait holds the goroutine's P, so callers keep it short
// (WaitLimit) and park on Go's poller for longer ones, unless the goroutine
// has a P of its own (Poller.OwnP: one of a run's several issuers).
package rawio

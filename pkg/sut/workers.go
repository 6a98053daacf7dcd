package sut

import "sync"

// workers runs sends on long-lived goroutines. A goroutine per request
// starts on a small stack and grows it through grpc-go's deep call chain on
// every request: stack copying was ~15% of the gRPC client's CPU (pprof of
// BenchmarkIssueQueryGRPC). A worker keeps its grown stack.
//
// do never queues: a job goes to a worker waiting for one, or to a new
// worker, so the Server scenario stays open loop however many requests are
// outstanding. The pool is as large as the most requests ever in flight at
// once, and its workers end at Close.
type workers struct {
	jobs     chan func() // unbuffered: a send succeeds only into an idle worker's hands
	quit     chan struct{}
	stopOnce sync.Once
}

func newWorkers() *workers {
	return &workers{jobs: make(chan func()), quit: make(chan struct{})}
}

func (w *workers) do(f func()) {
	select {
	case w.jobs <- f:
	default:
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	for {
		f()
		select {
		case f = <-w.jobs:
		case <-w.quit:
			return
		}
	}
}

// close lets idle workers end; busy ones end after their job. Jobs given
// after close still run, each on a goroutine of its own.
func (w *workers) close() { w.stopOnce.Do(func() { close(w.quit) }) }

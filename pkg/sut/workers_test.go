package sut

import (
	"sync"
	"testing"
)

// Every job starts at once however many are still running: the Server
// scenario must not queue a request behind a slow one.
func TestWorkersNeverQueue(t *testing.T) {
	w := newWorkers()
	defer w.close()
	const n = 50
	gate := make(chan struct{})
	var started sync.WaitGroup
	started.Add(n)
	var finished sync.WaitGroup
	finished.Add(n)
	for range n {
		w.do(func() {
			started.Done()
			<-gate
			finished.Done()
		})
	}
	started.Wait() // all 50 are running while none has finished
	close(gate)
	finished.Wait()
}

// Workers stay for the next job: after a wave of 4 concurrent jobs, the
// workers take jobs handed straight to them (a send only an idle worker can
// receive; without reuse it would never complete and the test would time out).
func TestWorkersAreReused(t *testing.T) {
	w := newWorkers()
	defer w.close()
	gate := make(chan struct{})
	var running, finished sync.WaitGroup
	running.Add(4)
	finished.Add(4)
	for range 4 {
		w.do(func() {
			running.Done()
			<-gate
			finished.Done()
		})
	}
	running.Wait()
	close(gate)
	finished.Wait()
	var again sync.WaitGroup
	again.Add(4)
	for range 4 {
		w.jobs <- again.Done
	}
	again.Wait()
}

func TestWorkersRunJobsAfterClose(t *testing.T) {
	w := newWorkers()
	w.close()
	w.close() // twice is fine
	ran := make(chan struct{})
	w.do(func() { close(ran) })
	<-ran
}

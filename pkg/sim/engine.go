package sim

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
)

// engine runs one version of one model: a FIFO queue of jobs in front of
// spec.Instances executors. It owns no goroutine: a job starts in the call
// that finds an instance free (an arrival, or the completion of an earlier
// execution), and an execution ends on a timer, so an idle engine costs
// nothing and a waiting caller blocks on a channel, never spins.
type engine struct {
	spec    *ModelSpec
	version string
	clk     clock
	// allOutputs lists every output's index: what a request that names none gets.
	allOutputs []int

	mu         sync.Mutex
	head, tail *job // waiting jobs, oldest first
	queued     int  // jobs in the queue
	idle       int  // free instances
	// freeAt holds, for each free instance, when it became free (its last
	// execution's nominal end; zero if it never ran): a request that arrived
	// earlier than it was handled (its kernel arrival time) starts no earlier
	// than its instance was free.
	freeAt     []time.Time
	closed     bool
	timerArmed bool // a dynamic-batching timer will call dispatch
	lat        *sampler
	exec       execStats
	cache      *responseCache // nil unless spec.Cache
	llm        *llmEngine     // an LLM model's (nil for a tensor model)

	req   requestStats
	truth truth // under mu
	drift drift // periods of load, for spec.Degrade and spec.Transient; under mu

	// wakeLead is how much before an execution's nominal end its timer is
	// set, so that callers resume at the nominal end rather than a timer's
	// and a scheduler's wake-up later (≈0.2-0.6 ms here): a model of
	// constant 5 ms must answer in 5 ms. It is learnt from the lateness
	// callers see (an integral controller), only on the real clock: fake
	// clocks fire exactly.
	wakeLead   atomic.Int64
	compensate bool

	// onEnqueue, when set (by tests), is called under mu once a job has been
	// admitted and has started, finished or joined the queue.
	onEnqueue func(*job)
}

type jobState uint8

const (
	queued jobState = iota
	running
	finished
	abandoned // its caller gave up while it waited
)

// job is one request's passage through the engine. start, end and batch are
// written under the engine's lock before done is closed.
type job struct {
	n          int // samples
	arrival    time.Time
	start, end time.Time
	batch      int // samples in the execution that ran it
	// period is when its period of load began and hold how long the
	// transient law keeps its answer past its execution's end (drift).
	period     time.Time
	hold       time.Duration
	state      jobState
	err        error
	done       chan struct{} // nil if it finished within enqueue
	prev, next *job
}

func newEngine(spec *ModelSpec, version string, clk clock) *engine {
	return &engine{
		spec:    spec,
		version: version,
		clk:     clk,
		idle:    spec.Instances,
		freeAt:  make([]time.Time, spec.Instances),
		// Only the real clock's timers are late; a fake one fires exactly.
		compensate: func() bool { _, real := clk.(realClock); return real }(),
		allOutputs: func() []int {
			all := make([]int, len(spec.Outputs))
			for i := range all {
				all[i] = i
			}
			return all
		}(),
		lat:  newSampler(spec.Latency, spec.Seed, spec.Name+"/"+version),
		exec: execStats{bySize: map[int]*batchStat{}},
		cache: func() *responseCache {
			if spec.Cache {
				return newResponseCache()
			}
			return nil
		}(),
	}
}

var errClosed = kserve.Errorf(codes.Unavailable, "sutproxy is shutting down")

// enqueue admits a job of n samples that arrived at arrival (its checks done)
// and starts what can start.
func (e *engine) enqueue(n int, arrival time.Time) (*job, error) {
	j := &job{n: n, arrival: arrival}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errClosed
	}
	e.drift.arrived(e.spec, j)
	e.push(j)
	e.dispatch()
	switch j.state {
	case finished:
	default:
		j.done = make(chan struct{})
	}
	if e.onEnqueue != nil {
		e.onEnqueue(j)
	}
	return j, nil
}

// wait blocks until j has run, or ctx is done; a job still queued is then
// taken out of the queue. A job already running keeps its instance until its
// execution ends, as a real model would, but its caller is not kept waiting.
//
// With compensation on, the wake lead is learnt from when the answer leaves
// (dep: the next write on its connection, after encoding and any writer
// hand-off) when the transport can tell, else from when the caller resumed.
func (e *engine) wait(ctx context.Context, j *job, dep departures) error {
	if j.done == nil {
		return j.err
	}
	select {
	case <-j.done:
		if e.compensate && j.err == nil {
			end := j.end
			if dep == nil || !dep.OnDeparture(func(start time.Time) { e.learnWakeLead(start.Sub(end)) }) {
				e.learnWakeLead(e.clk.Now().Sub(end))
			}
		}
		return j.err
	case <-ctx.Done():
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch j.state {
	case finished:
		return j.err
	case queued:
		e.remove(j)
	}
	j.state = abandoned
	return ctx.Err()
}

// departures tells when a request's answer starts leaving (rxstamp.Stamp).
type departures interface {
	OnDeparture(f func(start time.Time)) bool
}

// maxWakeLead bounds the compensation: a machine so loaded that callers wake
// later than this is not one a simulator can hide.
const maxWakeLead = 2 * time.Millisecond

// learnWakeLead moves the lead a fixed step toward whichever side the caller
// woke on: a stochastic estimate of the median lateness, so that the median
// caller resumes at the nominal end. (Matching the mean instead lets the rare
// multi-millisecond scheduler stall pull every other answer early.)
func (e *engine) learnWakeLead(late time.Duration) { learnLead(&e.wakeLead, late) }

// learnLead moves lead a fixed step toward late's side (learnWakeLead).
func learnLead(lead *atomic.Int64, late time.Duration) {
	const step = int64(5 * time.Microsecond)
	switch {
	case late > 0:
		if lead.Add(step) > int64(maxWakeLead) {
			lead.Store(int64(maxWakeLead))
		}
	case late < 0:
		if lead.Add(-step) < 0 {
			lead.Store(0)
		}
	}
}

func (e *engine) push(j *job) {
	j.prev = e.tail
	if e.tail != nil {
		e.tail.next = j
	} else {
		e.head = j
	}
	e.tail = j
	e.queued++
}

func (e *engine) remove(j *job) {
	if j.prev != nil {
		j.prev.next = j.next
	} else {
		e.head = j.next
	}
	if j.next != nil {
		j.next.prev = j.prev
	} else {
		e.tail = j.prev
	}
	j.prev, j.next = nil, nil
	e.queued--
}

// dispatch starts executions while an instance is free and the queue holds a
// batch ready to go. Called with mu held. An execution starts when its
// instance became free (the nominal end of the one before, not when that
// one's timer fired: timer lateness, tens of µs to a few ms on a busy host,
// delays responses but does not leak into the model's capacity), or when its
// batch was complete, whichever is later.
func (e *engine) dispatch() {
	for e.idle > 0 && e.head != nil {
		now := e.clk.Now()
		k, samples, notBefore, ready := e.nextBatch(now)
		if !ready {
			return
		}
		// The instance free the longest: the earliest possible start.
		inst := 0
		for i, t := range e.freeAt {
			if t.Before(e.freeAt[inst]) {
				inst = i
			}
		}
		start := e.freeAt[inst]
		if notBefore.After(start) {
			start = notBefore
		}
		if ended := e.launch(k, samples, start, now); !ended.IsZero() {
			e.freeAt[inst] = ended // over already: the instance goes on from there
		} else {
			e.freeAt[inst] = e.freeAt[len(e.freeAt)-1]
			e.freeAt = e.freeAt[:len(e.freeAt)-1]
		}
	}
}

// nextBatch is how many jobs from the head of the queue the next execution
// takes and their samples; ready is false when dynamic batching should wait
// for more (it then arms the timer that calls dispatch again). A batch sent
// because its oldest job waited the queue delay starts no earlier than
// notBefore.
func (e *engine) nextBatch(now time.Time) (k, samples int, notBefore time.Time, ready bool) {
	b := e.spec.DynamicBatching
	if b == nil {
		return 1, e.head.n, time.Time{}, true
	}
	j := e.head
	for ; j != nil && (k == 0 || samples+j.n <= b.MaxBatchSize); j = j.next {
		k++
		samples += j.n
	}
	// Full when the batch is at its cap or the next job does not fit; a job
	// bigger than the cap runs alone.
	if samples >= b.MaxBatchSize || j != nil {
		return k, samples, time.Time{}, true
	}
	deadline := e.head.arrival.Add(b.MaxQueueDelay.D())
	if !now.Before(deadline) {
		return k, samples, deadline, true
	}
	if !e.timerArmed {
		// The head only gets older, so a timer armed for an earlier head fires
		// no later than needed; dispatch then re-arms for the new head.
		e.timerArmed = true
		e.clk.AfterFunc(deadline.Sub(now), func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.timerArmed = false
			e.dispatch()
		})
	}
	return 0, 0, time.Time{}, false
}

// launch starts an execution of the first k queued jobs at start (no
// earlier than its last job's arrival). An execution already over by now,
// such as a zero-time one, finishes at once without a timer, and launch
// returns when it ended, so that the instance goes on from there: that is
// what lets the null model measure the load generator and not the simulator.
func (e *engine) launch(k, samples int, start, now time.Time) (freed time.Time) {
	first := e.head
	last := first
	for range k - 1 {
		last = last.next
	}
	e.head = last.next
	if e.head != nil {
		e.head.prev = nil
	} else {
		e.tail = nil
	}
	last.next = nil
	e.queued -= k
	for j := first; j != nil; j = j.next {
		if j.arrival.After(start) {
			start = j.arrival
		}
	}
	for j := first; j != nil; j = j.next {
		j.state, j.start, j.batch = running, start, samples
	}
	end := start.Add(scaled(e.spec, first, start, e.lat.draw(samples)))
	e.truth.launched(first, samples, start, end)
	if !end.After(now) {
		e.finish(first, samples, start, end)
		return end
	}
	e.idle--
	// The timer runs on real time: now may be a nominal instant (the end of
	// the execution before, when executions run back to back), and a delay
	// from it would carry each timer's lateness into the next.
	e.clk.AfterFunc(end.Sub(e.clk.Now())-time.Duration(e.wakeLead.Load()), func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.finish(first, samples, start, end)
		e.idle++
		e.freeAt = append(e.freeAt, end)
		e.dispatch()
	})
	return time.Time{}
}

// finish ends an execution: records it and releases its callers, but for
// those the transient law holds, whose answers a timer releases hold later
// (the instance is free at end all the same).
func (e *engine) finish(first *job, samples int, start, end time.Time) {
	e.exec.record(samples, end.Sub(start))
	for j := first; j != nil; {
		next := j.next
		j.next, j.prev = nil, nil
		if j.hold > 0 {
			e.holdAnswer(j, end.Add(j.hold))
		} else {
			release(j, end)
		}
		j = next
	}
}

// release ends a job at end. Called with mu held.
func release(j *job, end time.Time) {
	j.end = end
	if j.state == running {
		j.state = finished
	}
	if j.done != nil {
		close(j.done)
	}
}

// holdAnswer releases j at end, on a timer set the wake lead early as an
// execution's is. Called with mu held. enqueue gives a job that has not
// finished a done channel, so the timer always has one to close.
func (e *engine) holdAnswer(j *job, end time.Time) {
	e.clk.AfterFunc(end.Sub(e.clk.Now())-time.Duration(e.wakeLead.Load()), func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		release(j, end)
	})
}

// close fails every queued job; running executions end on their own timers.
func (e *engine) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	for j := e.head; j != nil; {
		next := j.next
		j.prev, j.next = nil, nil
		j.state, j.err = finished, errClosed
		if j.done != nil {
			close(j.done)
		}
		j = next
	}
	e.head, e.tail, e.queued = nil, nil, 0
}

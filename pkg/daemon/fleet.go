package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/clocksync"
)

// DefaultWorkerTimeout is LOADGEND_WORKER_TIMEOUT's default: a worker
// silent this long is lost (issue 29).
const DefaultWorkerTimeout = 3 * time.Second

const (
	// lostRetention is how long a lost worker stays listed, so that an
	// operator sees what went.
	lostRetention = 5 * time.Minute
	// maxPollWait bounds a worker's long poll: well inside the proxies'
	// and load balancers' idle timeouts a worker may sit behind.
	maxPollWait = 25 * time.Second
	// maxWorkers bounds the registry: a token holder registering names in
	// a loop cannot grow the daemon's memory without end.
	maxWorkers = 1024
	// maxPendingWork bounds the assignments waiting for a worker's poll.
	maxPendingWork = 8
	// sweepEvery is how often lost workers are looked for, at most.
	sweepEvery = 100 * time.Millisecond
)

// Errors of the Fleet API; each returned error wraps one.
var (
	// ErrNoWorkers: Pick found too few idle workers by its deadline.
	ErrNoWorkers = errors.New("not enough idle workers")
	// ErrWorkerGone: the worker is not registered, lost, or not the
	// crew's any more.
	ErrWorkerGone = errors.New("worker gone")
)

// Fleet is the coordinator's registry of workers: who registered, their
// heartbeats, the work waiting for their long polls, their clocks. The run
// code picks a Crew of idle workers from it.
type Fleet struct {
	now     func() time.Time
	timeout time.Duration // LOADGEND_WORKER_TIMEOUT
	version string        // the coordinator's: a worker must have it

	mu      sync.Mutex
	workers map[string]*member
	// changed is closed and replaced at every change Pick and SyncClocks
	// may wait for: a worker registered, idle, lost, or measured.
	changed chan struct{}
	closed  chan struct{} // the daemon shuts down: long polls end
	stats   func(idle, busy, lost int)
}

// member is one registered worker; one registration (session) of it.
type member struct {
	api.WorkerRegistration
	session    string
	registered time.Time
	lastBeat   time.Time
	lostAt     time.Time // zero while alive
	crew       *Crew     // the crew it is busy in, nil when idle
	timeout    time.Duration
	// told is the heartbeat interval the worker was last told (its
	// registration's answer, its last heartbeat's): it beats at that
	// until an answer tells it another.
	told time.Duration
	work []api.WorkerAssignment
	wake chan struct{} // 1-buffered: work came, or it was lost
	// The clock: the measurement in progress (exchanges so far and the
	// half of the next the coordinator holds) and the last estimate.
	exchanges []clocksync.Exchange
	half      *halfExchange
	clock     clocksync.Estimate
	clockAt   time.Time
	clockGen  uint64 // counts the estimates
}

type halfExchange struct {
	seq        int
	t0, t1, t2 int64
}

func newFleet(now func() time.Time, timeout time.Duration, version string) *Fleet {
	if timeout <= 0 {
		timeout = DefaultWorkerTimeout
	}
	return &Fleet{now: now, timeout: timeout, version: version, workers: map[string]*member{},
		changed: make(chan struct{}), closed: make(chan struct{})}
}

func (m *member) lost() bool { return !m.lostAt.IsZero() }

func (m *member) state() api.WorkerState {
	switch {
	case m.lost():
		return api.WorkerLost
	case m.crew != nil:
		return api.WorkerBusy
	}
	return api.WorkerIdle
}

// wantTimeout is the timeout the worker should be held to: its crew's
// run's, else the fleet's.
func (f *Fleet) wantTimeout(m *member) time.Duration {
	if m.timeout > 0 {
		return m.timeout
	}
	return f.timeout
}

// timeoutOf is the silence that loses the worker: the timeout it should be
// held to, but never less than four of the beats it was last told to make.
// A run's shorter worker_timeout_ms applies from the pick, while the worker
// still beats at the interval it was told before; until a heartbeat's
// answer has told it the run's, the old interval's timeout stands.
func (f *Fleet) timeoutOf(m *member) time.Duration {
	return max(f.wantTimeout(m), 4*m.told)
}

// interval is how often a worker is told to beat: four beats per timeout,
// so that one late or lost beat does not lose it.
func (f *Fleet) interval(m *member) time.Duration { return f.wantTimeout(m) / 4 }

// broadcast wakes the waiters of changed. Under f.mu.
func (f *Fleet) broadcast() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// close ends the long polls (the daemon shuts down).
func (f *Fleet) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.closed:
	default:
		close(f.closed)
	}
}

// sweep marks lost the workers silent past their timeout, tells their
// crews, and drops those lost for lostRetention.
func (f *Fleet) sweep() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	var idle, busy, lost int
	changed := false
	for name, m := range f.workers {
		if !m.lost() && now.Sub(m.lastBeat) > f.timeoutOf(m) {
			f.markLost(m, now)
			changed = true
		}
		if m.lost() && now.Sub(m.lostAt) > lostRetention {
			delete(f.workers, name)
			continue
		}
		switch m.state() {
		case api.WorkerIdle:
			idle++
		case api.WorkerBusy:
			busy++
		default:
			lost++
		}
	}
	if changed {
		f.broadcast()
	}
	if f.stats != nil {
		f.stats(idle, busy, lost)
	}
}

// markLost: under f.mu.
func (f *Fleet) markLost(m *member, now time.Time) {
	m.lostAt = now
	m.work = nil
	poke(m.wake)
	if c := m.crew; c != nil {
		// Buffered for the whole crew, and a member is lost once: never
		// blocks.
		c.lost <- LostWorker{Name: m.Name, At: now, LastHeartbeat: m.lastBeat, RunID: c.runID}
	}
}

// runSweeper sweeps until ctx ends.
func (f *Fleet) runSweeper(ctx context.Context) {
	every := min(sweepEvery, f.timeout/4)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.sweep()
		}
	}
}

// registerError is a refused registration: its status and code.
type registerError struct {
	status int
	code   string
	msg    string
}

func (e *registerError) Error() string { return e.msg }

// register adds a worker, or replaces a lost one of its name.
func (f *Fleet) register(reg api.WorkerRegistration) (api.WorkerRegistered, error) {
	if reg.Version != f.version {
		return api.WorkerRegistered{}, &registerError{409, api.CodeVersionMismatch, fmt.Sprintf(
			"worker %s is version %s, this coordinator is version %s: run workers of the coordinator's version (the same build or image tag)",
			reg.Name, reg.Version, f.version)}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if old, ok := f.workers[reg.Name]; ok && !old.lost() {
		return api.WorkerRegistered{}, &registerError{409, api.CodeNameTaken, fmt.Sprintf(
			"worker %s is registered and alive (address %s, last heartbeat %v ago): give this worker another --name, or wait %v for the other to be lost",
			reg.Name, old.Address, now.Sub(old.lastBeat).Round(time.Millisecond), f.timeoutOf(old))}
	}
	if _, ok := f.workers[reg.Name]; !ok && len(f.workers) >= maxWorkers {
		return api.WorkerRegistered{}, &registerError{503, api.CodeUnavailable, fmt.Sprintf("%d workers are registered, the most this coordinator keeps", maxWorkers)}
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand's contract)
	m := &member{WorkerRegistration: reg, session: hex.EncodeToString(b[:]), registered: now, lastBeat: now, wake: make(chan struct{}, 1)}
	f.workers[reg.Name] = m
	f.broadcast()
	m.told = f.interval(m)
	return api.WorkerRegistered{Name: reg.Name, Session: m.session, HeartbeatIntervalMs: m.told.Milliseconds(),
		WorkerTimeoutMs: f.wantTimeout(m).Milliseconds(), PollWaitMs: maxPollWait.Milliseconds()}, nil
}

// errUnknownWorker answers a request of a worker the fleet does not hold
// under that session.
func errUnknownWorker(name string) error {
	return fmt.Errorf("%w: worker %s is not registered here under this session (the coordinator restarted, or the worker was lost): register again", ErrWorkerGone, name)
}

// live is the worker name of session, alive; under f.mu.
func (f *Fleet) live(name, session string) (*member, error) {
	m, ok := f.workers[name]
	if !ok || m.lost() || session == "" || m.session != session {
		return nil, errUnknownWorker(name)
	}
	return m, nil
}

// heartbeat notes that the worker is alive, and an assignment it finished.
func (f *Fleet) heartbeat(name, session string, hb api.WorkerHeartbeat) (api.WorkerHeartbeatAck, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.live(name, session)
	if err != nil {
		return api.WorkerHeartbeatAck{}, err
	}
	m.lastBeat = f.now()
	c := m.crew
	if fin := hb.Finished; fin != nil && c != nil && fin.RunID == c.runID && !c.reported[name] {
		c.reported[name] = true
		c.finished <- FinishedWorker{Name: name, RunID: fin.RunID, Error: fin.Error}
	}
	m.told = f.interval(m)
	ack := api.WorkerHeartbeatAck{HeartbeatIntervalMs: m.told.Milliseconds()}
	// A worker carrying out a run its crew stopped, or one this daemon
	// does not know (it restarted, the crew was released), stops it.
	if hb.RunID != "" && (c == nil || c.runID != hb.RunID || c.stopped) {
		ack.StopRunID = hb.RunID
	}
	return ack, nil
}

// poll waits up to wait for the worker's next assignment; ok false when
// none came.
func (f *Fleet) poll(ctx context.Context, name, session string, wait time.Duration) (a api.WorkerAssignment, ok bool, err error) {
	t := time.NewTimer(min(wait, maxPollWait))
	defer t.Stop()
	for {
		f.mu.Lock()
		m, err := f.live(name, session)
		if err != nil {
			f.mu.Unlock()
			return a, false, err
		}
		if len(m.work) > 0 {
			a = m.work[0]
			m.work = m.work[1:]
			f.mu.Unlock()
			return a, true, nil
		}
		wake := m.wake
		f.mu.Unlock()
		select {
		case <-wake:
		case <-t.C:
			return a, false, nil
		case <-ctx.Done():
			return a, false, ctx.Err()
		case <-f.closed:
			return a, false, errClosing
		}
	}
}

var errClosing = errors.New("loadgend is shutting down")

// clockExchange is the coordinator's side of one exchange: t1 is when the
// request came; t2 is read here, as late as the answer allows.
func (f *Fleet) clockExchange(name, session string, req api.WorkerClockRequest, t1 int64) (api.WorkerClockResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, err := f.live(name, session)
	if err != nil {
		return api.WorkerClockResponse{}, err
	}
	if req.Seq == 0 {
		m.exchanges, m.half = m.exchanges[:0], nil
	} else {
		if m.half == nil || m.half.seq != req.Seq-1 {
			return api.WorkerClockResponse{}, &api.FieldError{Field: "seq", Message: fmt.Sprintf("exchange %d out of order: start again at seq 0", req.Seq)}
		}
		m.exchanges = append(m.exchanges, clocksync.Exchange{T0: m.half.t0, T1: m.half.t1, T2: m.half.t2, T3: req.PrevT3Ns})
		m.half = nil
	}
	resp := api.WorkerClockResponse{Seq: req.Seq, T1Ns: t1}
	if req.Final {
		est, err := clocksync.Estimated(m.exchanges)
		m.exchanges = m.exchanges[:0]
		if err != nil {
			return api.WorkerClockResponse{}, &api.FieldError{Field: "seq", Message: err.Error()}
		}
		m.clock, m.clockAt = est, f.now()
		m.clockGen++
		f.broadcast()
		resp.Estimate = &api.WorkerClock{OffsetNs: int64(est.Offset), UncertaintyNs: int64(est.Uncertainty), Exchanges: est.Exchanges}
	}
	resp.T2Ns = f.now().UnixNano()
	if !req.Final {
		m.half = &halfExchange{seq: req.Seq, t0: req.T0Ns, t1: t1, t2: resp.T2Ns}
	}
	return resp, nil
}

// list is GET /v1/workers, by name.
func (f *Fleet) list() api.WorkerList {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := api.WorkerList{Workers: []api.WorkerInfo{}}
	for _, m := range f.workers {
		w := api.WorkerInfo{Name: m.Name, Address: m.Address, Version: m.Version, State: m.state(),
			RegisteredAt: m.registered, LastHeartbeat: m.lastBeat}
		if m.crew != nil {
			w.RunID = m.crew.runID
		}
		if m.clockGen > 0 {
			off, unc, at := int64(m.clock.Offset), int64(m.clock.Uncertainty), m.clockAt
			w.ClockOffsetNs, w.ClockUncertaintyNs, w.ClockMeasuredAt = &off, &unc, &at
		}
		out.Workers = append(out.Workers, w)
	}
	slices.SortFunc(out.Workers, func(a, b api.WorkerInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

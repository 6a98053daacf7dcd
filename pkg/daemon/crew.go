package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/clocksync"
)

// PickRequest asks the fleet for the workers of one distributed run.
type PickRequest struct {
	RunID string
	// N is how many workers; shard k goes to Crew.Names()[k].
	N int
	// Wait bounds the wait for N idle workers (the run's workers_wait_ms).
	Wait time.Duration
	// Timeout, when positive, is the run's worker_timeout_ms: the picked
	// workers are lost after that much silence instead of the daemon's
	// LOADGEND_WORKER_TIMEOUT, until Release.
	Timeout time.Duration
}

// LostWorker is a crew member that stopped beating.
type LostWorker struct {
	Name, RunID   string
	At            time.Time // when the coordinator declared it lost
	LastHeartbeat time.Time
}

// FinishedWorker is a crew member whose executor returned.
type FinishedWorker struct {
	Name, RunID string
	Error       string // "" when the executor returned nil
}

// Crew is the workers picked for one run, busy until Release.
type Crew struct {
	f        *Fleet
	runID    string
	names    []string
	sessions map[string]string // the registrations picked: a worker registered again is not the crew's
	lost     chan LostWorker
	finished chan FinishedWorker
	reported map[string]bool // finished sent, under f.mu
	stopped  bool            // Stop was called, under f.mu
}

// Pick takes req.N idle workers, waiting up to req.Wait for them, and marks
// them busy for req.RunID. They are taken in name order. Too few by then:
// an error wrapping ErrNoWorkers that names who is registered and who is
// busy.
func (f *Fleet) Pick(ctx context.Context, req PickRequest) (*Crew, error) {
	if req.N <= 0 {
		return nil, fmt.Errorf("%w: a run needs at least one worker, asked for %d", ErrNoWorkers, req.N)
	}
	deadline := time.NewTimer(req.Wait)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		var idle []string
		for name, m := range f.workers {
			if m.state() == api.WorkerIdle {
				idle = append(idle, name)
			}
		}
		if len(idle) >= req.N {
			slices.Sort(idle)
			c := f.newCrew(req, idle[:req.N])
			f.mu.Unlock()
			return c, nil
		}
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			return nil, f.tooFew(req)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %d workers: %w", req.N, ctx.Err())
		}
	}
}

// newCrew marks names busy in a new crew; under f.mu.
func (f *Fleet) newCrew(req PickRequest, names []string) *Crew {
	c := &Crew{f: f, runID: req.RunID, names: slices.Clone(names), sessions: map[string]string{},
		lost: make(chan LostWorker, len(names)), finished: make(chan FinishedWorker, len(names)), reported: map[string]bool{}}
	for _, n := range names {
		m := f.workers[n]
		m.crew, m.timeout, m.work = c, req.Timeout, nil
		c.sessions[n] = m.session
	}
	f.broadcast()
	return c
}

// tooFew says who is there when a pick fails.
func (f *Fleet) tooFew(req PickRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var idle, busy, lost []string
	for name, m := range f.workers {
		switch m.state() {
		case api.WorkerIdle:
			idle = append(idle, name)
		case api.WorkerBusy:
			busy = append(busy, name+" (run "+m.crew.runID+")")
		default:
			lost = append(lost, name)
		}
	}
	list := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		slices.Sort(s)
		return strings.Join(s, ", ")
	}
	return fmt.Errorf("%w: run %s wants %d workers, %d idle after waiting %v; idle: %s; busy: %s; lost: %s (start more workers, or raise workers_wait_ms)",
		ErrNoWorkers, req.RunID, req.N, len(idle), req.Wait, list(idle), list(busy), list(lost))
}

// Names are the crew's workers; shard k is Names()[k].
func (c *Crew) Names() []string { return slices.Clone(c.names) }

// Lost delivers each member that stops beating, once.
func (c *Crew) Lost() <-chan LostWorker { return c.lost }

// Finished delivers each member's end of its assignment, once.
func (c *Crew) Finished() <-chan FinishedWorker { return c.finished }

// member is the crew's registration of name, alive; under f.mu.
func (c *Crew) member(name string) (*member, error) {
	m, ok := c.f.workers[name]
	if !ok || m.session != c.sessions[name] || m.crew != c {
		return nil, fmt.Errorf("%w: worker %s is not in run %s's crew any more", ErrWorkerGone, name, c.runID)
	}
	if m.lost() {
		return nil, fmt.Errorf("%w: worker %s of run %s was lost at %s", ErrWorkerGone, name, c.runID, m.lostAt.Format(time.RFC3339Nano))
	}
	return m, nil
}

// Assign hands a an assignment its long poll returns.
func (c *Crew) Assign(name string, a api.WorkerAssignment) error {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	m, err := c.member(name)
	if err != nil {
		return err
	}
	if len(m.work) >= maxPendingWork {
		return fmt.Errorf("worker %s has %d assignments it has not polled for", name, len(m.work))
	}
	m.work = append(m.work, a)
	poke(m.wake)
	return nil
}

// SyncClocks tells every member to measure its clock now and waits for
// their new estimates (or ctx's end, or a member lost). Call it before
// Assign: a worker carrying out an assignment does not poll. A member's
// start time on its clock is then est[name].ClientTime(start).
func (c *Crew) SyncClocks(ctx context.Context) (map[string]clocksync.Estimate, error) {
	c.f.mu.Lock()
	gens := map[string]uint64{}
	for _, n := range c.names {
		m, err := c.member(n)
		if err != nil {
			c.f.mu.Unlock()
			return nil, err
		}
		gens[n] = m.clockGen
		m.work = append(m.work, api.WorkerAssignment{RunID: c.runID, SyncClock: true, Shards: len(c.names), Shard: slices.Index(c.names, n)})
		poke(m.wake)
	}
	c.f.mu.Unlock()
	for {
		c.f.mu.Lock()
		out := map[string]clocksync.Estimate{}
		for _, n := range c.names {
			m, err := c.member(n)
			if err != nil {
				c.f.mu.Unlock()
				return nil, err
			}
			if m.clockGen > gens[n] {
				out[n] = m.clock
			}
		}
		changed := c.f.changed
		c.f.mu.Unlock()
		if len(out) == len(c.names) {
			return out, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("measuring the workers' clocks (%d of %d measured): %w", len(out), len(c.names), ctx.Err())
		}
	}
}

// CheckClocks refuses the run when a member's clock in clocks (the
// estimates SyncClocks returned, the ones the run starts its workers with)
// is missing or more uncertain than max (max_clock_uncertainty_ms), naming
// each with its numbers; the errors wrap clocksync.ErrTooUncertain.
func (c *Crew) CheckClocks(clocks map[string]clocksync.Estimate, max time.Duration) error {
	var errs []error
	for _, n := range c.names {
		if err := clocks[n].Check(n, max); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stop tells the crew's workers to stop their assignments: each hears it
// in the answer to its next heartbeat (within a heartbeat interval) and
// reports its end in the one after. Their pending work is dropped.
func (c *Crew) Stop() {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	c.stopped = true
	for _, n := range c.names {
		if m, ok := c.f.workers[n]; ok && m.crew == c {
			m.work = nil
		}
	}
}

// Release makes the crew's workers idle again (those still alive and of the
// crew's registration), their pending work dropped.
func (c *Crew) Release() {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	for _, n := range c.names {
		if m, ok := c.f.workers[n]; ok && m.crew == c {
			m.crew, m.timeout, m.work = nil, 0, nil
		}
	}
	c.f.broadcast()
}

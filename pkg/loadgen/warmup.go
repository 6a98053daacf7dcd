package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Warmup is what a run's warm-up sent (result.json's "warmup"): the
// scenario's load for DurationMs on the same SUT before the timed run, so
// that its connections, caches and autoscaling are warm, then discarded.
// Its samples are in no latency, count, accuracy log or observer of the
// timed run. Unanswered samples count as failed.
type Warmup struct {
	DurationMs       uint64 `json:"duration_ms"`
	SamplesIssued    int64  `json:"samples_issued"`
	SamplesCompleted int64  `json:"samples_completed"`
	SamplesFailed    int64  `json:"samples_failed"`
}

// warmup is a warm-up in flight. Its queries reuse the trace's samples and
// schedule (cycled when the warm-up outlasts them) under IDs past the
// trace's, so a late answer can never be taken for a timed query's: the
// event-loop SUTs send every answer to the latest done callback, which
// after the warm-up is the timed run's, and Run.complete hands answers
// with those IDs back here.
type warmup struct {
	r       *Run
	base    int           // the first warm-up query's ID: the trace's length
	cur     *trace.Cursor // the warm-up's own, cycled
	issuedQ atomic.Int64
	issuedS atomic.Int64
	doneS   atomic.Int64
	failedS atomic.Int64
	active  atomic.Int64
	closed  atomic.Bool
	notify  chan struct{}
}

// warmUp runs the warm-up: the load for engine.warmup_ms, then a drain
// bounded by the drain timeout from the moment issuing stopped, then the
// timed run may start. A cancel of ctx stops it at once, without a drain.
// The SUT context of its requests ends with it: requests still out are
// abandoned where the SUT can abandon them.
func (r *Run) warmUp(ctx context.Context) *Warmup {
	d := time.Duration(r.settings.Engine.WarmupMs) * time.Millisecond
	w := &warmup{r: r, base: r.n, cur: r.tr.Cursor(), notify: make(chan struct{}, 1)}
	r.warm.Store(w)
	sutCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	r.log.Info("warm-up started", "duration", d)
	if r.settings.Scenario == trace.Server {
		w.openLoop(ctx, sutCtx, d)
	} else {
		w.closedLoop(ctx, sutCtx, d)
	}
	_ = w.cur.Close() // its pass may hold a trace file
	drain := time.Duration(r.settings.Engine.DrainTimeoutMs) * time.Millisecond
	drained := ctx.Err() == nil && w.wait(ctx, time.Now().Add(drain))
	unanswered := w.close()
	out := &Warmup{DurationMs: r.settings.Engine.WarmupMs, SamplesIssued: w.issuedS.Load(),
		SamplesCompleted: w.doneS.Load(), SamplesFailed: w.failedS.Load()}
	if ctx.Err() == nil && !drained {
		r.log.Warn("warm-up not drained: its backlog stays on the SUT", "unanswered_samples", unanswered, "drain_timeout", drain)
	}
	r.log.Info("warm-up finished", "samples_issued", out.SamplesIssued, "samples_completed", out.SamplesCompleted, "samples_failed", out.SamplesFailed)
	return out
}

// openLoop is Server's warm-up: the trace's Poisson schedule from now,
// cycled, until d.
func (w *warmup) openLoop(ctx, sutCtx context.Context, d time.Duration) {
	r := w.r
	done := ctx.Done()
	// One pass of the schedule, and a mean gap before it starts again.
	span := r.tr.LastScheduled() + time.Duration(float64(time.Second)/r.tr.Settings.TargetQPS)
	start := r.clock.Now()
	for k := 0; w.room(k); k++ {
		q, ok := w.next()
		if !ok {
			return
		}
		off := time.Duration(k/r.n)*span + q.Scheduled
		if off >= d {
			return
		}
		due := start.Add(off)
		r.iss[0].sleepUntil(ctx, due) // issuer 0 warms up alone
		if cancelled(done) {
			return
		}
		w.issue(sutCtx, k, q, due, r.clock.Now())
	}
}

// closedLoop is the other scenarios' warm-up: the next query when the
// previous one has answered (Offline: its one query again), until d has
// passed. A query still unanswered the drain timeout after it went out
// ends the warm-up.
func (w *warmup) closedLoop(ctx, sutCtx context.Context, d time.Duration) {
	r := w.r
	drain := time.Duration(r.settings.Engine.DrainTimeoutMs) * time.Millisecond
	end := r.clock.Now().Add(d)
	for k := 0; w.room(k) && r.clock.Now().Before(end); k++ {
		if cancelled(ctx.Done()) {
			return
		}
		q, ok := w.next()
		if !ok {
			return
		}
		now := r.clock.Now()
		w.issue(sutCtx, k, q, now, now)
		if !w.wait(ctx, time.Now().Add(drain)) {
			return
		}
	}
}

// room reports whether warm-up query k has an ID: the event-loop SUTs tag
// requests with 32 bits of it.
func (w *warmup) room(k int) bool { return w.base+k < math.MaxInt32 }

// next is the trace's next query, from the first again after the last;
// false when a shaped pass ended early or could not start again (the
// run then stops: shapeEnded).
func (w *warmup) next() (trace.Query, bool) {
	q, ok := w.cur.Next()
	if !ok && w.cur.Err() == nil {
		w.cur.Reset()
		q, ok = w.cur.Next()
	}
	if !ok {
		err := w.cur.Err()
		if err == nil {
			err = errors.New("the load shape's pass gave no arrival")
		}
		w.r.shapeEnded(fmt.Errorf("warm-up: %w", err))
	}
	return q, ok
}

// issue sends warm-up query k, the trace's query q.
func (w *warmup) issue(sutCtx context.Context, k int, q trace.Query, sched, now time.Time) {
	r := w.r
	id := w.base + k
	w.issuedS.Add(int64(len(q.Samples)))
	w.issuedQ.Add(1)
	r.sut.IssueQuery(sutCtx, Query{ID: id, FirstSample: id * r.spq, Samples: q.Samples, Scheduled: sched, Issued: now,
		Stage: q.Stage, Model: q.Model, Request: q.Request}, w.complete)
}

// complete counts a warm-up completion; it measures nothing.
func (w *warmup) complete(c Completion) {
	w.active.Add(1)
	defer w.active.Add(-1)
	if w.closed.Load() || c.Count <= 0 || c.Query < w.base || int64(c.Query-w.base) >= w.issuedQ.Load() {
		return
	}
	if c.Err != nil {
		w.failedS.Add(int64(c.Count))
	} else {
		w.doneS.Add(int64(c.Count))
	}
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (w *warmup) settled() bool { return w.doneS.Load()+w.failedS.Load() >= w.issuedS.Load() }

// wait returns true once every warm-up sample issued has answered; false
// if ctx ends or the deadline passes first. It uses the real clock: it
// bounds waiting, it measures nothing.
func (w *warmup) wait(ctx context.Context, deadline time.Time) bool {
	r := w.r
	done := ctx.Done()
	var timer *time.Timer
	for !w.settled() {
		left := time.Until(deadline)
		if left <= 0 || cancelled(done) {
			return false
		}
		step := min(left, 20*time.Millisecond)
		if r.poller != nil {
			r.poller.PollUntil(ctx, time.Now().Add(step))
			continue
		}
		if timer == nil {
			timer = time.NewTimer(step)
			defer timer.Stop()
		} else {
			timer.Reset(step)
		}
		select {
		case <-w.notify:
		case <-timer.C:
		case <-done:
		}
	}
	return true
}

// close stops counting completions, waits out those in progress, and fails
// every sample still unanswered. It returns their count.
func (w *warmup) close() int64 {
	w.closed.Store(true)
	for w.active.Load() != 0 {
		runtimeYield()
	}
	un := w.issuedS.Load() - w.doneS.Load() - w.failedS.Load()
	if un > 0 {
		w.failedS.Add(un)
	}
	return max(un, 0)
}

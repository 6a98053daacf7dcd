package loadgen

import (
	"context"
	"runtime"
	"time"
)

// The issue loops, one per scenario (LOADGEN-REFERENCE §2). Each returns why
// it stopped issuing; the caller then drains outstanding responses.

// issueServer walks the Poisson schedule open loop: sleep until a query is
// due, issue it, never wait for a response. Latency counts from the ideal
// time, so a late issue is charged to the SUT, not hidden.
// With several shards, each issuer walks its own queries open loop;
// max_query_count M is the queries before M in the trace, whichever
// issuer holds them.
func (r *Run) issueServer(ctx, sutCtx context.Context, is *issuer) StopReason {
	done := ctx.Done()
	maxAsync := int64(r.tr.Settings.MaxAsyncQueries)
	maxQ := r.tr.Settings.MaxQueryCount
	for {
		q, ok := is.next()
		if !ok {
			return StopCompleted
		}
		if maxQ > 0 && uint64(q.Index) >= maxQ {
			return StopMaxQueryCount // this shard's part of the first M is issued
		}
		due := r.startTime.Add(q.Scheduled)
		is.sleepUntil(ctx, due)
		if cancelled(done) {
			return StopCancelled
		}
		now := r.clock.Now()
		is.issue(sutCtx, q, due, now)
		if maxAsync > 0 && r.queriesIssued()-r.queriesDone() > maxAsync {
			return r.stopAll(StopTooManyInFlight)
		}
		if maxQ > 0 && uint64(q.Index+r.shardN) >= maxQ {
			return StopMaxQueryCount
		}
		if stop := r.limits(0, now); stop != "" {
			return r.stopAll(stop)
		}
	}
}

// issueClosedLoop is SingleStream and loadgen6 MultiStream: the next query
// goes out when the previous one has completed, scheduled at that moment.
func (r *Run) issueClosedLoop(ctx, sutCtx context.Context, is *issuer) StopReason {
	done := ctx.Done()
	w := is.w
	for i := 0; i < r.n; i++ {
		if cancelled(done) {
			return StopCancelled
		}
		now := r.clock.Now()
		q, _ := is.next()
		is.issue(sutCtx, q, now, now)
		if r.naturalEnd(i+1, now) {
			return StopCompleted
		}
		if stop := r.limits(i+1, now); stop != "" {
			return stop
		}
		if stop := w.wait(ctx, int64(i+1)); stop != "" {
			return stop
		}
	}
	return StopRanOut
}

// issueConcurrent is the closed loop of engine.concurrency N: N queries
// go out at the start, and each completion lets the next go at once. There
// is no schedule, so a query is scheduled when it is sent and its latency
// counts from the send: unlike the open loop of Server, a slow server slows
// the load instead of queueing it (perf_analyzer's --concurrency-range).
// At most N queries are ever outstanding. With several issuers, each keeps
// its share of the N outstanding (issuer.window) and waits for its own
// queries; the counts that end the run are over all of them, but for
// max_query_count M, which is the queries before M in the trace whichever
// issuer holds them, as in issueServer.
func (r *Run) issueConcurrent(ctx, sutCtx context.Context, is *issuer) StopReason {
	done := ctx.Done()
	w, n := is.w, is.window
	maxQ := r.tr.Settings.MaxQueryCount
	for i := int64(0); i < int64(is.count()); i++ {
		if i >= n {
			// Its query i may go once i-n+1 of its queries are done: n
			// outstanding.
			if stop := w.wait(ctx, i-n+1); stop != "" {
				return r.stopAll(stop)
			}
		}
		if cancelled(done) {
			return StopCancelled
		}
		q, _ := is.next()
		if maxQ > 0 && uint64(q.Index) >= maxQ {
			return StopMaxQueryCount // this shard's part of the first M is issued
		}
		now := r.clock.Now()
		is.issue(sutCtx, q, now, now)
		issued := int(r.queriesIssued())
		atomicMax(&r.maxOutstanding, int64(issued)-r.queriesDone())
		if maxQ > 0 && uint64(q.Index+r.shardN) >= maxQ {
			return StopMaxQueryCount
		}
		if r.naturalEnd(issued, now) {
			return r.stopAll(StopCompleted)
		}
		if stop := r.limits(0, now); stop != "" {
			return r.stopAll(stop)
		}
	}
	return StopRanOut
}

// issueTicks is v0.5 MultiStream: queries are due on ticks start+k·interval
// (k = 1, 2, …). A query whose tick passes while the previous one is still
// outstanding goes on the first tick after that query completes; it records
// how many ticks it advanced (1 = on time).
func (r *Run) issueTicks(ctx, sutCtx context.Context, is *issuer) StopReason {
	done := ctx.Done()
	w := is.w
	iv := int64(r.interval)
	tick := int64(0)
	for i := 0; i < r.n; i++ {
		if i > 0 {
			if stop := w.wait(ctx, int64(i)); stop != "" {
				return stop
			}
		}
		if cancelled(done) {
			return StopCancelled
		}
		el := int64(r.clock.Now().Sub(r.startTime))
		next := tick + 1
		if next*iv < el {
			next = (el + iv - 1) / iv // the first tick at or after now
		}
		r.ticks[i] = int32(min(next-tick, 1<<31-1))
		tick = next
		due := r.startTime.Add(time.Duration(next * iv))
		is.sleepUntil(ctx, due)
		if cancelled(done) {
			return StopCancelled
		}
		now := r.clock.Now()
		q, _ := is.next()
		is.issue(sutCtx, q, due, now)
		if r.naturalEnd(i+1, now) {
			return StopCompleted
		}
		if stop := r.limits(i+1, now); stop != "" {
			return stop
		}
	}
	return StopRanOut
}

// issueOffline sends the one query of every sample at the start; the SUT
// adapter cuts it into requests.
// Split between shards, each issuer hands its SUT its share of the
// samples (issueShare).
func (r *Run) issueOffline(ctx, sutCtx context.Context, is *issuer) StopReason {
	w := is.w
	now := r.clock.Now()
	if r.split {
		is.issueShare(sutCtx, now)
	} else {
		q, _ := is.next()
		is.issue(sutCtx, q, r.startTime, now)
	}
	// The one query is the whole run: it is waited for as the closed
	// loops wait for theirs (ended by a cancel, or by the endpoint's
	// silence for the drain timeout), not cut off by the drain timeout
	// from the moment it went out.
	if stop := w.wait(ctx, 1); stop != "" {
		return stop
	}
	return StopCompleted
}

// naturalEnd is LoadGen's "Ending naturally": enough queries issued and the
// last one issued at or after the target duration.
func (r *Run) naturalEnd(issued int, now time.Time) bool {
	e := r.tr.Settings
	return uint64(issued) >= e.MinQueryCount && now.Sub(r.startTime) >= time.Duration(e.TargetDurationMs)*time.Millisecond
}

// limits applies max_query_count and max_duration after an issue.
func (r *Run) limits(issued int, now time.Time) StopReason {
	e := r.tr.Settings
	if e.MaxQueryCount > 0 && uint64(issued) >= e.MaxQueryCount {
		return StopMaxQueryCount
	}
	if e.MaxDurationMs > 0 && now.Sub(r.startTime) > time.Duration(e.MaxDurationMs)*time.Millisecond {
		return StopMaxDuration
	}
	return ""
}

func cancelled(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

func runtimeYield() { runtime.Gosched() }

// waiter blocks the issuer until queries complete, and declares the SUT
// stalled when no sample at all completes for the drain timeout. It uses the
// real clock: it bounds waiting, it measures nothing.
type waiter struct {
	r     *Run
	is    *issuer
	idle  time.Duration
	poll  time.Duration
	timer *time.Timer
}

func newWaiter(r *Run, is *issuer) *waiter {
	idle := time.Duration(r.settings.Engine.DrainTimeoutMs) * time.Millisecond
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{r: r, is: is, idle: idle, poll: min(idle, 20*time.Millisecond), timer: t}
}

// wait returns "" once target of its issuer's queries have completed,
// StopCancelled if ctx ends first, StopStalled if the SUT goes silent for
// the drain timeout.
func (w *waiter) wait(ctx context.Context, target int64) StopReason {
	r, is := w.r, w.is
	if is.doneQ.Load() >= target {
		return ""
	}
	done := ctx.Done()
	lastS, lastProgress := r.samplesDone(), time.Now()
	for is.doneQ.Load() < target {
		if is.poller != nil {
			// Completions arrive from inside the poll, on this goroutine.
			is.poller.PollUntil(ctx, time.Now().Add(w.poll))
			if cancelled(done) {
				return StopCancelled
			}
		} else {
			w.timer.Reset(w.poll)
			select {
			case <-is.notify:
			case <-w.timer.C:
			case <-done:
				w.timer.Stop()
				return StopCancelled
			}
		}
		if s := r.samplesDone(); s != lastS {
			lastS, lastProgress = s, time.Now()
		} else if time.Since(lastProgress) >= w.idle {
			w.timer.Stop()
			return StopStalled
		}
	}
	w.timer.Stop()
	return ""
}

// drain waits for every query its issuer issued until deadline: the drain timeout is a
// bound on the whole drain from the moment issuing stops, not on the silence
// between answers (a SUT far over capacity answers now and then for as long
// as its backlog lasts). False if some query was still unanswered then.
func (w *waiter) drain(deadline time.Time) bool {
	is := w.is
	target := is.issuedQ.Load()
	for is.doneQ.Load() < target {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		step := min(left, w.poll)
		if is.poller != nil {
			is.poller.PollUntil(context.Background(), time.Now().Add(step))
			continue
		}
		w.timer.Reset(step)
		select {
		case <-is.notify:
			w.timer.Stop()
		case <-w.timer.C:
		}
	}
	return true
}

package shardrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/worker"
)

// Bounds on the coordinator's 202: a retry no sooner than minRetry (a
// coordinator asking 0 ms must not make the worker spin) and no later than
// maxRetry; and how many failed posts in a row (no answer, 5xx) the worker
// tries again before it gives up.
const (
	defaultRetry     = 100 * time.Millisecond
	minRetry         = 10 * time.Millisecond
	maxRetry         = 5 * time.Second
	maxReadyFailures = 5
)

// ready is what the worker found, from the probe and the engine's run.
func (sh *shard) ready() api.WorkerReady {
	var r api.WorkerReady
	if o := sh.opened.Load(); o != nil {
		r.QSLTotalSampleCount, r.QSLPerformanceSampleCount = o.QSL.Total, o.QSL.Performance
		r.SUTName, r.Protocol = o.SUTName, o.Protocol
		if p := o.Probe; p != nil {
			r.API, r.Batched, r.MaxBatchSize = string(p.API), p.Batched, p.MaxBatch
		}
	}
	if run := sh.run.Load(); run != nil {
		r.TraceQueries = run.Trace().Len()
	}
	return r
}

// gate is the engine's start gate (loadgen.WithStartGate): once the shard
// is ready, report it, and wait for the common start the coordinator picks
// once every worker is. The start is returned on the engine's clock (the
// system's), converted from the worker's clock the coordinator gives it on.
func (sh *shard) gate(ctx context.Context) (time.Time, error) {
	sh.reached.Store(true)
	body := sh.ready()
	deadline := time.Now().Add(sh.cfg.MaxReadyWait)
	failures := 0
	for {
		st, status, err := sh.cfg.Coordinator.Ready(ctx, sh.a.RunID, body)
		var wait time.Duration
		switch {
		case err == nil && status == http.StatusOK:
			return sh.startOf(st)
		case err == nil && status == http.StatusAccepted:
			wait, failures = retryOf(st.RetryMs), 0
		case errors.Is(err, worker.ErrRunEnded), ctx.Err() != nil:
			return time.Time{}, fmt.Errorf("reporting ready: %w", err)
		case err != nil && (status == 0 || status >= 500) && failures < maxReadyFailures:
			failures++
			wait = time.Duration(failures) * 200 * time.Millisecond
			sh.log.Warn("reporting ready failed; trying again", "error", err, "in", wait)
		case err != nil:
			return time.Time{}, fmt.Errorf("reporting ready: %w", err)
		default:
			return time.Time{}, fmt.Errorf("%w: the coordinator answered ready with %d: want 200 (the start) or 202 (wait)", ErrStart, status)
		}
		if time.Now().Add(wait).After(deadline) {
			return time.Time{}, fmt.Errorf("%w: no start from the coordinator %v after the worker was ready", ErrStart, sh.cfg.MaxReadyWait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, fmt.Errorf("waiting for the start: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// retryOf is a 202's wait, bounded.
func retryOf(ms int64) time.Duration {
	if ms <= 0 {
		return defaultRetry
	}
	return min(max(time.Duration(ms)*time.Millisecond, minRetry), maxRetry)
}

// startOf converts a start on the worker's clock (cfg.Now: the clock the
// coordinator measured, a test's shift included) to the system clock the
// engine schedules on, keeping its monotonic reading: the time from now to
// the start is the same on both.
func (sh *shard) startOf(st api.WorkerStart) (time.Time, error) {
	if st.StartNs <= 0 {
		return time.Time{}, fmt.Errorf("%w: the coordinator answered ready with 200 but no start_ns", ErrStart)
	}
	ahead := time.Duration(st.StartNs - sh.cfg.Now().UnixNano())
	start := time.Now().Add(ahead)
	if ahead > sh.cfg.MaxStartAhead {
		return time.Time{}, fmt.Errorf("%w: start_ns %d is %v ahead of the worker's clock, more than the %v a start may be", ErrStart, st.StartNs, ahead.Round(time.Millisecond), sh.cfg.MaxStartAhead)
	}
	sh.log.Info("ready; the run starts", "start_ns", st.StartNs, "in", ahead)
	return start, nil
}

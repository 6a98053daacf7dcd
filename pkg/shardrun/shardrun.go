// Package shardrun is a worker's shard of a distributed run (issue 29):
// the executor `loadgend worker` hands each assignment to. It builds the
// run from the spec its coordinator sent, probes the target and prepares
// its shard as a local run does, reports ready and waits for the common
// start (api/distributed_run.go), issues its shard of the one trace from
// that start, streams its records to the coordinator while it runs, and
// sends its end. The worker writes no run files: the coordinator merges the
// shards' records and writes one run's.
package shardrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/metrics"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/runspec"
	"github.com/netloadgen/netloadgen/pkg/shardrec"
	"github.com/netloadgen/netloadgen/pkg/trace"
	"github.com/netloadgen/netloadgen/pkg/worker"
)

// Coordinator is what a shard needs of its coordinator (pkg/worker's
// Link): Ready answers a WorkerReady with the start (200) or a wait (202),
// its 409 wrapping worker.ErrRunEnded, status 0 when no answer came;
// Records delivers one record chunk, its 409 wrapping worker.ErrRunEnded
// and its 400 worker.ErrChunkRefused.
type Coordinator interface {
	Ready(ctx context.Context, runID string, r api.WorkerReady) (api.WorkerStart, int, error)
	Records(ctx context.Context, runID string, chunk []byte) error
}

// Config is a worker's, for all its shards.
type Config struct {
	// Worker is the worker's name, in its chunks.
	Worker      string
	Coordinator Coordinator
	// Env is what the worker resolves itself: the spec's data path under
	// its own DataRoot, its @env:/@file: references from its own Secrets.
	// OutDir is ignored: a worker writes no run files.
	Env runspec.Env
	// Now is the worker's clock, the one the coordinator measured and
	// whose readings a start is given on (nil: time.Now).
	Now func() time.Time
	// Metrics, when set, carry the shard's live metrics (the worker's
	// /metrics, labelled worker).
	Metrics *metrics.Metrics
	Log     *slog.Logger
	// Stream tunes the record chunks (shardrec's defaults when zero).
	Stream shardrec.Options
	// MaxReadyWait bounds the wait for the start once ready (default 10
	// min): a coordinator that answers 202 for ever does not hold the
	// worker for ever. MaxStartAhead bounds how far ahead a start may be
	// (default 1 min).
	MaxReadyWait, MaxStartAhead time.Duration
	// FinishTimeout bounds the delivery of the last chunks once the run
	// ended (default 30 s).
	FinishTimeout time.Duration
}

// Errors of a shard, beside the run's own: ErrAssignment for an assignment
// that cannot be carried out (its spec, its shard), ErrStart for a start
// the coordinator did not give properly.
var (
	ErrAssignment = errors.New("shardrun: assignment")
	ErrStart      = errors.New("shardrun: start")
)

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.MaxReadyWait <= 0 {
		c.MaxReadyWait = 10 * time.Minute
	}
	if c.MaxStartAhead <= 0 {
		c.MaxStartAhead = time.Minute
	}
	if c.FinishTimeout <= 0 {
		c.FinishTimeout = 30 * time.Second
	}
	return c
}

// shard is one assignment being carried out.
type shard struct {
	cfg Config
	a   api.WorkerAssignment
	log *slog.Logger

	opened  atomic.Pointer[runner.Opened]
	run     atomic.Pointer[loadgen.Run]
	reached atomic.Bool // the gate was called: the coordinator heard of the shard
	stop    context.CancelCauseFunc
}

// Execute carries out shard a.Shard of a.Shards of run a.RunID. It returns
// nil once its shard ran and its last chunk was delivered; an error
// otherwise (the coordinator also hears it in the worker's heartbeat). A
// shard that could not prepare (its spec, its data, the target's probe)
// posts ready with the error before it returns, so that the coordinator
// fails the run naming the worker, before any load.
func Execute(ctx context.Context, cfg Config, a api.WorkerAssignment) error {
	cfg = cfg.withDefaults()
	sh := &shard{cfg: cfg, a: a, log: cfg.Log.With("run_id", a.RunID, "shard", a.Shard, "shards", a.Shards)}
	spec, rs, err := build(a, cfg.Env)
	if err != nil {
		sh.readyFailed(ctx, err)
		return err
	}
	sh.metricsStarted(rs, spec)
	err = sh.execute(ctx, spec)
	sh.metricsEnded(ctx, err)
	return err
}

// build decodes and builds the assignment's run, as the worker's own.
func build(a api.WorkerAssignment, env runspec.Env) (runner.Spec, api.RunSpec, error) {
	if a.Shards < 1 || a.Shard < 0 || a.Shard >= a.Shards {
		return runner.Spec{}, api.RunSpec{}, fmt.Errorf("%w: shard %d of %d: want 0 ≤ shard < shards", ErrAssignment, a.Shard, a.Shards)
	}
	var rs api.RunSpec
	dec := json.NewDecoder(bytes.NewReader(a.Spec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rs); err != nil {
		return runner.Spec{}, api.RunSpec{}, fmt.Errorf("%w: the run spec: %w", ErrAssignment, err)
	}
	if rs.Scenario == "" {
		rs.Scenario = api.DefaultScenario
	}
	// The coordinator admitted the spec under its own limits; the worker
	// checks what the spec says and builds it, and carries out one shard of
	// it, not a distributed run of its own.
	rs.Workers, rs.WorkersWaitMs, rs.MaxClockUncertaintyMs, rs.WorkerTimeoutMs = 0, nil, nil, nil
	if rs.Search != nil {
		return runner.Spec{}, api.RunSpec{}, fmt.Errorf("%w: a search cannot be a distributed run", ErrAssignment)
	}
	env.OutDir = ""
	r, err := runspec.Build(rs, env)
	if err != nil {
		return runner.Spec{}, api.RunSpec{}, fmt.Errorf("%w: the run spec: %w", ErrAssignment, err)
	}
	spec := r.Spec
	spec.OutDir, spec.KeepSamples = "", false
	// A shard has one issuer (loadgen.WithShard): the run's settings.issuers
	// split a run in one process; across workers the shards do.
	spec.Settings.Engine.Issuers = 1
	return spec, rs, nil
}

// execute runs the shard and delivers its records.
func (sh *shard) execute(ctx context.Context, spec runner.Spec) error {
	st := shardrec.NewStreamer(shardrec.Header{RunID: sh.a.RunID, Worker: sh.cfg.Worker, Shard: sh.a.Shard, Shards: sh.a.Shards}, sh.cfg.Stream)
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	sh.stop = stop
	streamCtx, endStream := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := st.Run(streamCtx, sh.send); err != nil {
			sh.log.Warn("the coordinator takes no records: stopping the shard", "error", err)
			stop(err)
		}
	})
	engine := []loadgen.Option{loadgen.WithShard(sh.a.Shard, sh.a.Shards), loadgen.WithRecordSink(st), loadgen.WithStartGate(sh.gate)}
	if sh.cfg.Metrics != nil {
		engine = append(engine, loadgen.WithObserver(sh.cfg.Metrics.Observer()))
	}
	out, err := runner.Run(runCtx, spec, runner.Options{Logger: sh.log, Engine: engine,
		Opened:  func(o runner.Opened) { sh.opened.Store(&o) },
		Started: func(r *loadgen.Run) { sh.run.Store(r) }})
	endStream()
	wg.Wait()
	cause := context.Cause(runCtx)
	if !errors.Is(cause, context.Canceled) && cause != nil {
		// The coordinator ended the run (409), or refused or never took
		// the records: it has no use for the end.
		return fmt.Errorf("run %s stopped: %w", sh.a.RunID, cause)
	}
	if err != nil {
		if !sh.reached.Load() {
			sh.readyFailed(ctx, err)
		}
		return err
	}
	// A stop from the coordinator (ctx cancelled: another worker was
	// lost, the run was cancelled) stopped issuing and drained, as a
	// local run's cancel does: the end still goes, so that the
	// coordinator accounts for this shard's samples and does not take the
	// worker for lost. It waits for the ends of the workers it stopped.
	// The last chunks are resent until the timeout, but not after an
	// answer that no resend changes.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sh.cfg.FinishTimeout)
	defer cancel()
	fctx, giveUp := context.WithCancelCause(tctx)
	defer giveUp(nil)
	final := func(ctx context.Context, chunk []byte) error {
		err := sh.send(ctx, chunk)
		if permanent(err) {
			giveUp(err)
		}
		return err
	}
	if err := st.Finish(fctx, shardrec.EndOf(sh.run.Load(), out.Result), final); err != nil {
		return fmt.Errorf("run %s: sending the last records: %w", sh.a.RunID, err)
	}
	sh.log.Info("shard done", "issued", out.Result.SamplesIssued, "completed", out.Result.SamplesCompleted, "failed", out.Result.SamplesFailed, "chunks", st.Sent())
	return nil
}

// send delivers one chunk; an answer that ends the run stops the shard.
func (sh *shard) send(ctx context.Context, chunk []byte) error {
	err := sh.cfg.Coordinator.Records(ctx, sh.a.RunID, chunk)
	if permanent(err) {
		sh.stop(err)
	}
	return err
}

// permanent: an answer to a chunk that ends the shard: the run ended, or
// the coordinator will take none of its records again.
func permanent(err error) bool {
	return errors.Is(err, worker.ErrRunEnded) || errors.Is(err, worker.ErrChunkRefused)
}

// readyFailed tells the coordinator the shard could not prepare, and why,
// so that it fails the run naming this worker before any load. Best
// effort: the heartbeat reports the executor's error anyway.
func (sh *shard) readyFailed(ctx context.Context, cause error) {
	if ctx.Err() != nil {
		return // stopped: the coordinator knows
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msg := cause.Error()
	if len(msg) > 4000 {
		msg = msg[:4000]
	}
	// The coordinator answers an error with 409: the run fails.
	if _, _, err := sh.cfg.Coordinator.Ready(ctx, sh.a.RunID, api.WorkerReady{Error: msg}); err != nil && !errors.Is(err, worker.ErrRunEnded) {
		sh.log.Warn("reporting the failure to prepare", "error", err)
	}
}

// metricsStarted makes the run the worker's metrics' active one, at its
// share of the target rate.
func (sh *shard) metricsStarted(rs api.RunSpec, spec runner.Spec) {
	if sh.cfg.Metrics == nil {
		return
	}
	rate := 0.0
	switch spec.Settings.Scenario {
	case trace.Server:
		rate = spec.Settings.ServerTargetQPS
	case trace.Offline:
		rate = spec.Settings.OfflineExpectedQPS
	}
	if err := sh.cfg.Metrics.RunStarted(sh.a.RunID, rs.Scenario, rs.Model, rs.Target, rate/float64(sh.a.Shards)); err != nil {
		sh.log.Warn("metrics", "error", err)
	}
}

func (sh *shard) metricsEnded(ctx context.Context, err error) {
	if sh.cfg.Metrics == nil {
		return
	}
	state := metrics.StateDone
	switch {
	case ctx.Err() != nil || errors.Is(err, worker.ErrRunEnded):
		state = metrics.StateCancelled
	case err != nil:
		state = metrics.StateFailed
	}
	if err := sh.cfg.Metrics.RunEnded(sh.a.RunID, state); err != nil {
		sh.log.Warn("metrics", "error", err)
	}
}

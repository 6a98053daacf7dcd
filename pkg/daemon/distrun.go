package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/clocksync"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
	"github.com/netloadgen/netloadgen/pkg/recordwire"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/secret"
	"github.com/netloadgen/netloadgen/pkg/shardrec"
	"github.com/netloadgen/netloadgen/pkg/target"
)

// The coordinator's side of a distributed run (issue 29): pick the crew,
// measure its clocks, assign the shards, wait for every ready, start them
// all at one instant, merge their records as they stream in, and end the run
// as one host's run would end, its files written by pkg/runlog from the
// merged record. api/distributed_run.go has the protocol.

// Bounds of a distributed run's waits: every wait of the coordinator is
// bounded, so a worker that goes silent costs the run, never the daemon.
const (
	// clockWait bounds the clock measurements of the crew.
	clockWait = 30 * time.Second
	// readyWait bounds the workers' preparation (probe, samples, requests
	// encoded, connections opened).
	readyWait = 5 * time.Minute
	// readyHold is how long a ready's request is held for the start
	// before its 202: a start picked meanwhile goes out at once.
	readyHold = time.Second
	// readyRetry is the RetryMs of a 202.
	readyRetry = 100 * time.Millisecond
	// minStartMargin is the least time between picking the start and the
	// start: the answers to the held readies, and a worker's run waking
	// up, must fit in it. A choice with room, not a measured need: on
	// loopback the answers take well under a millisecond.
	minStartMargin = 500 * time.Millisecond
	// endSlack is added to the bound on a run's length: the start margin,
	// the last chunk's interval and its trip.
	endSlack = 10 * time.Second
)

// errRunEnded answers a worker's ready or records for a run that is not the
// distributed run in progress (it ended, it never was, or the worker is not
// in it): 409, and the worker stops.
var errRunEnded = errors.New("not a distributed run in progress")

// distRun is the distributed run in progress as the worker routes see it.
type distRun struct {
	id     string
	names  []string
	clocks map[string]clocksync.Estimate

	// wake is poked at each ready, chunk and refusal: the run's loop
	// looks again.
	wake chan struct{}

	mu      sync.RWMutex
	ready   map[string]api.WorkerReady
	startNs int64              // the common start on the coordinator's clock; 0 until every worker is ready
	rcv     *shardrec.Receiver // set with startNs
	refused map[string]error   // a worker whose chunk was refused: it is lost
	over    error              // the run failed or ended: readies and chunks get 409
	// decided is closed when startNs or over is set: the held readies
	// answer.
	decided chan struct{}
}

func newDistRun(id string, names []string, clocks map[string]clocksync.Estimate) *distRun {
	return &distRun{id: id, names: names, clocks: clocks, wake: make(chan struct{}, 1),
		ready: map[string]api.WorkerReady{}, refused: map[string]error{}, decided: make(chan struct{})}
}

// noteReady keeps a worker's ready.
func (d *distRun) noteReady(name string, rd api.WorkerReady) {
	d.mu.Lock()
	if _, ok := d.ready[name]; !ok || rd.Error != "" {
		d.ready[name] = rd
	}
	d.mu.Unlock()
	poke(d.wake)
}

// finish ends the run for the worker routes with why; the first reason
// stays.
func (d *distRun) finish(why error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.over != nil {
		return
	}
	d.over = why
	if d.startNs == 0 {
		close(d.decided)
	}
}

// begin sets the start and the receiver, and releases the held readies.
func (d *distRun) begin(rcv *shardrec.Receiver, start time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rcv, d.startNs = rcv, start.UnixNano()
	if d.over == nil {
		close(d.decided)
	}
}

// answer is a ready's answer once the start is known: the start on the
// worker's clock, or errRunEnded; ok false while undecided.
func (d *distRun) answer(name string) (api.WorkerStart, error, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	switch {
	case d.over != nil:
		return api.WorkerStart{}, fmt.Errorf("%w: run %s: %w", errRunEnded, d.id, d.over), true
	case d.startNs != 0:
		return api.WorkerStart{StartNs: d.clocks[name].ClientTime(d.startNs)}, nil, true
	}
	return api.WorkerStart{}, nil, false
}

// waitStart holds a ready up to hold for the start.
func (d *distRun) waitStart(ctx context.Context, name string, hold time.Duration) (api.WorkerStart, error, bool) {
	t := time.NewTimer(hold)
	defer t.Stop()
	select {
	case <-d.decided:
	case <-t.C:
	case <-ctx.Done():
	}
	return d.answer(name)
}

// receive applies one of the worker's chunks. A chunk refused makes the
// worker lost for the run (its records can no longer be whole).
func (d *distRun) receive(name string, chunk []byte) error {
	d.mu.RLock()
	over, rcv := d.over, d.rcv
	var err error
	switch {
	case over != nil:
		err = fmt.Errorf("%w: run %s: %w", errRunEnded, d.id, over)
	case rcv == nil:
		err = fmt.Errorf("%w: worker %s: records before the run's start", shardrec.ErrChunk, name)
	default:
		// Under the read lock: the run's end waits for the chunks being
		// applied, and none is applied after it.
		_, err = rcv.Receive(chunk)
	}
	d.mu.RUnlock()
	if errors.Is(err, shardrec.ErrChunk) || errors.Is(err, shardrec.ErrWorkerRefused) {
		d.mu.Lock()
		if _, ok := d.refused[name]; !ok && d.rcv != nil && slices.Contains(d.names, name) {
			d.refused[name] = err
		}
		d.mu.Unlock()
	}
	poke(d.wake)
	return err
}

// refusals are the workers whose records were refused, with why.
func (d *distRun) refusals() map[string]error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make(map[string]error, len(d.refused))
	for n, err := range d.refused {
		out[n] = err
	}
	return out
}

// closeRecords refuses every later chunk; it waits for those being applied.
func (d *distRun) closeRecords() {
	d.finish(errors.New("the run has ended"))
}

// waitReady waits for every worker's ready: an error names the worker that
// could not prepare, was lost, or ended its assignment first.
func (d *distRun) waitReady(ctx context.Context, crew *Crew) (map[string]api.WorkerReady, error) {
	t := time.NewTimer(readyWait)
	defer t.Stop()
	for {
		d.mu.RLock()
		ready := make(map[string]api.WorkerReady, len(d.ready))
		for n, rd := range d.ready {
			ready[n] = rd
		}
		d.mu.RUnlock()
		for _, n := range d.names { // shard order: the first failure named
			if rd, ok := ready[n]; ok && rd.Error != "" {
				return nil, fmt.Errorf("worker %s could not prepare: %s", n, rd.Error)
			}
		}
		if len(ready) == len(d.names) {
			return ready, nil
		}
		select {
		case <-d.wake:
		case l := <-crew.Lost():
			return nil, fmt.Errorf("worker %s lost while preparing (no heartbeat since %s)", l.Name, l.LastHeartbeat.Format(time.RFC3339Nano))
		case f := <-crew.Finished():
			if f.Error != "" {
				return nil, fmt.Errorf("worker %s could not prepare: %s", f.Name, f.Error)
			}
			return nil, fmt.Errorf("worker %s ended its assignment before it was ready", f.Name)
		case <-t.C:
			return nil, fmt.Errorf("%d of %d workers ready after %v (waiting for %s): see their logs", len(ready), len(d.names), readyWait, waitingFor(d.names, ready))
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the workers to prepare: %w", context.Cause(ctx))
		}
	}
}

func waitingFor(names []string, ready map[string]api.WorkerReady) string {
	var out []string
	for _, n := range names {
		if _, ok := ready[n]; !ok {
			out = append(out, n)
		}
	}
	return fmt.Sprint(out)
}

// agree checks that the workers built the same run: the same sample
// library's counts and the same trace as the coordinator's.
func agree(names []string, ready map[string]api.WorkerReady, merged *loadgen.Run) error {
	first := ready[names[0]]
	for _, n := range names {
		rd := ready[n]
		if rd.QSLTotalSampleCount != first.QSLTotalSampleCount || rd.QSLPerformanceSampleCount != first.QSLPerformanceSampleCount {
			return fmt.Errorf("worker %s's sample library has %d samples (%d for performance), worker %s's %d (%d): the workers must load the same data",
				n, rd.QSLTotalSampleCount, rd.QSLPerformanceSampleCount, names[0], first.QSLTotalSampleCount, first.QSLPerformanceSampleCount)
		}
		if merged != nil && rd.TraceQueries != merged.Trace().Len() {
			return fmt.Errorf("worker %s built a trace of %d queries, the coordinator's has %d: the worker runs other settings (another version?)",
				n, rd.TraceQueries, merged.Trace().Len())
		}
	}
	return nil
}

// startMargin is how far ahead the start is picked: the answers to the held
// readies must reach every worker first. A few of the slowest round trip
// the clocks measured, and at least minStartMargin.
func startMargin(clocks map[string]clocksync.Estimate) time.Duration {
	m := minStartMargin
	for _, est := range clocks {
		m = max(m, 10*est.Best.RoundTrip())
	}
	return m
}

// assignedSpec is the spec a worker carries out: the spec as admitted, its
// header values resolved (the worker sends them; it holds none of the
// coordinator's secret references), the daemon's caps on the run's length
// and drain written in, so that the worker's trace and drain are the
// coordinator's.
func assignedSpec(spec api.RunSpec, rspec runner.Spec) (json.RawMessage, error) {
	if len(rspec.Headers) > 0 {
		spec.Headers = make(map[string]string, len(rspec.Headers))
		for _, h := range rspec.Headers {
			spec.Headers[h.Name] = h.Value
		}
	}
	maxDur, drain := rspec.Settings.MaxDurationMs, rspec.Settings.Engine.DrainTimeoutMs
	spec.Overrides.MaxDurationMs, spec.Overrides.DrainTimeoutMs = &maxDur, &drain
	return json.Marshal(spec)
}

// msDur is a spec's milliseconds as a duration.
func msDur(ms uint64) time.Duration { return time.Duration(ms) * time.Millisecond }

// runDistributed carries out a distributed run: spec as stored, rspec as
// admitted. Before the start an error fails the run (nil Outcome); from the
// start on, the run ends with its files written, whatever happened.
func (s *Service) runDistributed(ctx context.Context, a *activeRun, spec api.RunSpec, rspec runner.Spec, log *slog.Logger) (*runner.Outcome, error) {
	// The run's secrets are scrubbed from what comes back from the workers
	// (their errors, failure messages and examples) as a local run's are
	// from what its server sends: workers scrub their own, and the
	// coordinator does not rely on it.
	scr := runner.Scrubber(rspec)
	out, err := s.distribute(ctx, a, spec, rspec, scr, scr.Logger(log))
	return out, scr.Error(err)
}

// distribute is runDistributed once its text is scrubbed.
func (s *Service) distribute(ctx context.Context, a *activeRun, spec api.RunSpec, rspec runner.Spec, scr *secret.Scrubber, log *slog.Logger) (*runner.Outcome, error) {
	dd := spec.Distributed()
	crew, err := s.fleet.Pick(ctx, PickRequest{RunID: a.id, N: spec.Workers, Wait: msDur(dd.WorkersWaitMs), Timeout: msDur(dd.WorkerTimeoutMs)})
	if err != nil {
		return nil, err
	}
	defer crew.Release()
	names := crew.Names()
	log.Info("workers picked", "workers", names)
	cctx, cancel := context.WithTimeout(ctx, clockWait)
	clocks, err := crew.SyncClocks(cctx)
	cancel()
	if err == nil {
		err = crew.CheckClocks(clocks, time.Duration(dd.MaxClockUncertaintyMs*float64(time.Millisecond)))
	}
	if err != nil {
		return nil, fmt.Errorf("the workers' clocks: %w", err)
	}
	d := newDistRun(a.id, names, clocks)
	s.dist.Store(d)
	defer s.dist.CompareAndSwap(d, nil)
	defer d.closeRecords()
	merged, err := s.prepareCrew(ctx, d, crew, spec, rspec, scr, log)
	if err != nil {
		crew.Stop()
		d.finish(err)
		return nil, err
	}
	a.run.Store(merged)
	rcv := shardrec.NewReceiver(merged, a.id, names, recordwire.Limits{})
	start := time.Now().Add(startMargin(clocks))
	merged.MergedStarted(start)
	d.begin(rcv, start)
	log.Info("distributed run starting", "workers", len(names), "start", start, "queries", merged.Trace().Len())
	end := d.follow(ctx, crew, rcv, start, rspec.Settings, dd, log)
	d.closeRecords()
	ready0 := d.readyOf(names[0])
	end.SUTName = ready0.SUTName
	res := merged.FinishMerged(rcv.End(end))
	res.Workers = workerShards(names, clocks, rcv.Ends(), end.Lost)
	log.Info("distributed run ended", "validity", res.Validity, "reason", res.EndReason, "lost", len(end.Lost))
	return writeMerged(merged, res, rspec, ready0, log)
}

// writeMerged writes the merged run's files where a local run writes its
// own, with what the first worker's probe found in place of the probe's.
func writeMerged(merged *loadgen.Run, res *loadgen.Result, rspec runner.Spec, ready0 api.WorkerReady, log *slog.Logger) (*runner.Outcome, error) {
	res.Headers = runner.ShownHeaders(rspec.Headers)
	res.API = ready0.API
	out := &runner.Outcome{Result: res}
	if rspec.OutDir == "" {
		return out, nil
	}
	targetURL := rspec.Target
	if t, err := target.Parse(rspec.Target); err == nil {
		targetURL = t.URL
	}
	o := runlog.Options{TargetURL: targetURL, Model: rspec.Model, Logger: log, KeepSamples: rspec.KeepSamples, Extra: []mlperflog.Field{
		{Key: "protocol", Value: ready0.Protocol}, {Key: "batched", Value: fmt.Sprint(ready0.Batched)},
		{Key: "max_batch_size", Value: fmt.Sprint(ready0.MaxBatchSize)}, {Key: "workers", Value: fmt.Sprint(len(res.Workers))}}}
	if len(res.Headers) > 0 {
		o.Extra = append(o.Extra, mlperflog.Field{Key: "headers", Value: strings.Join(res.Headers, "; ")})
	}
	if ready0.API != "" {
		o.Extra = append(o.Extra, mlperflog.Field{Key: "api", Value: ready0.API})
	}
	if err := runlog.Write(rspec.OutDir, merged, res, o); err != nil {
		return out, fmt.Errorf("writing the run's files: %w", err)
	}
	return out, nil
}

// prepareCrew assigns the shards, waits for every ready, and builds the
// coordinator's merged run from what the workers found.
func (s *Service) prepareCrew(ctx context.Context, d *distRun, crew *Crew, spec api.RunSpec, rspec runner.Spec, scr *secret.Scrubber, log *slog.Logger) (*loadgen.Run, error) {
	body, err := assignedSpec(spec, rspec)
	if err != nil {
		return nil, fmt.Errorf("encoding the workers' spec: %w", err)
	}
	for k, n := range d.names {
		if err := crew.Assign(n, api.WorkerAssignment{RunID: d.id, Spec: body, Shard: k, Shards: len(d.names)}); err != nil {
			return nil, fmt.Errorf("assigning shard %d to worker %s: %w", k, n, err)
		}
	}
	ready, err := d.waitReady(ctx, crew)
	if err != nil {
		return nil, err
	}
	first := ready[d.names[0]]
	if err := agree(d.names, ready, nil); err != nil {
		return nil, err
	}
	merged, err := loadgen.NewMergedRun(rspec.Settings, loadgen.QSLCounts{Total: first.QSLTotalSampleCount, Performance: first.QSLPerformanceSampleCount},
		len(d.names), loadgen.WithLogger(log), loadgen.WithObserver(s.met.Observer()), loadgen.WithTextScrubber(scr.String))
	if err != nil {
		return nil, fmt.Errorf("the merged run: %w", err)
	}
	if err := agree(d.names, ready, merged); err != nil {
		return nil, err
	}
	if err := merged.NameWorkers(d.names); err != nil {
		return nil, err
	}
	return merged, nil
}

func (d *distRun) readyOf(name string) api.WorkerReady {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.ready[name]
}

// workerShards is result.json's workers[].
func workerShards(names []string, clocks map[string]clocksync.Estimate, ends []*recordwire.End, lost []loadgen.LostWorker) []loadgen.WorkerShard {
	out := make([]loadgen.WorkerShard, len(names))
	for k, n := range names {
		w := loadgen.WorkerShard{Name: n, Shard: k, ClockOffsetNs: int64(clocks[n].Offset), ClockUncertaintyNs: int64(clocks[n].Uncertainty)}
		if e := ends[k]; e != nil {
			w.SamplesIssued, w.SamplesCompleted, w.SamplesFailed = e.Issued, e.Completed, e.Failed
			w.IssueLatenessP50Ns, w.IssueLatenessP99Ns, w.IssueLatenessMaxNs = e.LatenessP50Ns, e.LatenessP99Ns, e.LatenessMaxNs
		}
		w.Lost = slices.ContainsFunc(lost, func(l loadgen.LostWorker) bool { return l.Shard == k })
		out[k] = w
	}
	return out
}

// follower is the state of follow's loop.
type follower struct {
	d       *distRun
	crew    *Crew
	rcv     *shardrec.Receiver
	start   time.Time
	endWait time.Duration
	log     *slog.Logger

	lost     map[int]loadgen.LostWorker
	finished map[int]bool     // the worker's executor returned: nothing more comes from it
	stopping <-chan time.Time // set once the crew was stopped: the ends are waited for until it fires
	gaveUp   bool             // the wait for the ends passed
	reason   loadgen.StopReason
}

// follow receives the run's records until every worker's end arrived or
// its worker was lost. A worker lost (silent for worker_timeout_ms, its
// records refused, its assignment failed), a cancel, or the run outlasting
// its bound stop the crew; the others' ends are then waited for up to
// their drain timeout and a heartbeat (a stopped worker that returns
// without its end is not waited for). It returns how the run ended as the
// coordinator saw it.
func (d *distRun) follow(ctx context.Context, crew *Crew, rcv *shardrec.Receiver, start time.Time, ls loadgen.Settings, dd api.DistributedDefaults, log *slog.Logger) loadgen.MergedEnd {
	drain, hb := msDur(ls.Engine.DrainTimeoutMs), msDur(dd.WorkerTimeoutMs)
	// A stopped worker hears it at its next heartbeat (a quarter of the
	// timeout), drains, and sends its end.
	f := &follower{d: d, crew: crew, rcv: rcv, start: start, endWait: drain + hb/4 + time.Second, log: log, lost: map[int]loadgen.LostWorker{}, finished: map[int]bool{}}
	bound := time.NewTimer(time.Until(start) + msDur(ls.MaxDurationMs) + drain + hb + endSlack)
	defer bound.Stop()
	done := ctx.Done()
	for !f.over() {
		select {
		case <-d.wake:
			for n, err := range d.refusals() {
				f.lose(n, time.Now(), "its records were refused: "+err.Error())
			}
		case l := <-crew.Lost():
			f.lose(l.Name, l.At, "no heartbeat for worker_timeout_ms")
		case fw := <-crew.Finished():
			f.finish(fw)
		case <-done:
			done = nil
			f.reason = loadgen.StopCancelled
			if errors.Is(context.Cause(ctx), loadgen.ErrInterrupted) {
				f.reason = loadgen.StopInterrupted
			}
			f.stop("the run was stopped through the API")
		case <-bound.C:
			f.stop("the run outlasted its max_duration, drain and worker timeouts")
		case <-f.stopping:
			// A stopped worker's records up to its stop are merged; what
			// it had in flight is unanswered.
			f.gaveUp = true
			log.Warn("the stopped workers' ends did not all come", "waited", f.endWait)
		}
	}
	return f.end()
}

// finish notes a worker's executor's return. One that failed before its
// end came, while the run went on, is lost; one the coordinator stopped
// sends nothing more.
func (f *follower) finish(fw FinishedWorker) {
	k := slices.Index(f.d.names, fw.Name)
	if k < 0 {
		return
	}
	f.finished[k] = true
	if fw.Error != "" && f.stopping == nil && f.rcv.Ends()[k] == nil {
		f.lose(fw.Name, time.Now(), "its assignment failed: "+fw.Error)
	}
}

// over: every worker's end arrived, or it was lost, or it was stopped and
// returned; or the wait for the stopped workers passed.
func (f *follower) over() bool {
	if f.gaveUp {
		return true
	}
	for k, e := range f.rcv.Ends() {
		_, lost := f.lost[k]
		if e == nil && !lost && !(f.stopping != nil && f.finished[k]) {
			return false
		}
	}
	return true
}

// lose marks worker name lost at at (once), and stops the crew.
func (f *follower) lose(name string, at time.Time, why string) {
	k := slices.Index(f.d.names, name)
	if _, ok := f.lost[k]; k < 0 || ok || f.rcv.Ends()[k] != nil {
		return
	}
	f.lost[k] = loadgen.LostWorker{Name: name, Shard: k, AtNs: max(0, int64(at.Sub(f.start)))}
	f.log.Warn("worker lost", "worker", name, "shard", k, "why", why, "at_s", at.Sub(f.start).Seconds())
	f.stop("worker " + name + " was lost")
}

// stop stops the crew once, and bounds the wait for the others' ends.
func (f *follower) stop(why string) {
	if f.stopping != nil {
		return
	}
	f.log.Info("stopping the workers", "why", why)
	f.crew.Stop()
	f.stopping = time.After(f.endWait)
}

// end is the coordinator's account of the run's end, before the workers'
// ends complete it (Receiver.End).
func (f *follower) end() loadgen.MergedEnd {
	e := loadgen.MergedEnd{Reason: f.reason, Wall: f.start, DurationNs: max(0, int64(time.Since(f.start)))}
	if e.Reason == "" {
		e.Reason = loadgen.StopCompleted
		for _, end := range f.rcv.Ends() { // the first worker's, in shard order
			if end != nil && end.StopReason != "" {
				e.Reason = loadgen.StopReason(end.StopReason)
				break
			}
		}
	}
	for k := range f.d.names {
		if l, ok := f.lost[k]; ok {
			e.Lost = append(e.Lost, l)
		}
	}
	return e
}

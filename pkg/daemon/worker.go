package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runner"
	"github.com/netloadgen/netloadgen/pkg/runspec"
	"github.com/netloadgen/netloadgen/pkg/runstore"
	"github.com/netloadgen/netloadgen/pkg/serverstats"
	"github.com/netloadgen/netloadgen/pkg/serverview"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// activeRun is the run the worker is carrying out.
type activeRun struct {
	id     string
	cancel context.CancelCauseFunc
	run    atomic.Pointer[loadgen.Run]
	// endAs is the state a stop asked for (cancelled by the API,
	// interrupted by shutdown); "" while nobody asked.
	endAs atomic.Value // api.State
	rate  rateWindow
	// latency is the progress events' latency per second.
	latency latencyWindow
	// serverMetrics reads the latest scrape's known metrics (nil: none
	// scraped yet).
	serverMetrics atomic.Pointer[func() []serverview.LiveValue]
	// serverQueue is the latest live figure of the server's statistics
	// (nil: none yet, or not offered).
	serverQueue atomic.Pointer[serverstats.Live]
	// trial is the search trial running (nil: not a search, or none
	// started yet), for the progress.
	trial atomic.Pointer[api.SearchTrialProgress]
}

// stop ends the run as cancelled or interrupted. An interrupt is the
// cancel's cause, so the engine ends it loadgen.StopInterrupted.
func (a *activeRun) stop(as api.State) {
	a.endAs.CompareAndSwap(nil, as)
	var cause error
	if as == api.StateInterrupted {
		cause = loadgen.ErrInterrupted
	}
	a.cancel(cause)
}

func (a *activeRun) stoppedAs() api.State {
	if v, ok := a.endAs.Load().(api.State); ok {
		return v
	}
	return ""
}

// progress is the live snapshot, with the completion rate over the last
// few seconds.
func (a *activeRun) progress() (api.Progress, bool) {
	r := a.run.Load()
	if r == nil {
		return api.Progress{}, false
	}
	p := r.Progress()
	if !p.Started {
		return api.Progress{}, false
	}
	now := time.Now()
	out := api.ProgressFrom(p, a.rate.add(now, p.CompletedSamples))
	if rl := a.latency.add(now, r.LatencySnapshot); rl.WindowS > 0 {
		out.Recent = &api.RecentLatency{P50Ms: rl.P50Ms, P99Ms: rl.P99Ms, Samples: rl.Samples, WindowS: rl.WindowS}
	}
	if latest := a.serverMetrics.Load(); latest != nil {
		out.ServerMetrics = (*latest)()
	}
	a.addServerQueue(&out)
	if t := a.trial.Load(); t != nil {
		tr := *t
		out.SearchTrial = &tr
	}
	return out, true
}

// work runs queued runs one at a time: a load generator must not compete
// with itself.
func (s *Service) work() {
	defer close(s.workerDone)
	for {
		id, ok := s.next()
		if !ok {
			return
		}
		s.execute(id)
		// The run's records (up to LOADGEND_MAX_TRACE_SAMPLES × ~16
		// bytes) are garbage now; an idle daemon allocates too
		// little for the runtime to collect them and hand the pages back
		// soon, so a run of a few GB would stay resident (#8). One
		// collection per run.
		debug.FreeOSMemory()
		if s.afterRun != nil {
			s.afterRun()
		}
	}
}

// activate makes a the active run, unless the service is closing (the run
// stays queued for the next start) or the API cancelled it while it was
// being admitted.
func (s *Service) activate(a *activeRun) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || (s.takenCancelled && s.taken == a.id) {
		return false
	}
	s.active, s.taken = a, ""
	return true
}

// untake clears the worker's hold on id once it is active or gone.
func (s *Service) untake(id string) {
	s.mu.Lock()
	if s.taken == id {
		s.taken, s.takenCancelled = "", false
	}
	s.mu.Unlock()
}

// queuePosition is how many runs are ahead of queued run id: the active
// one, or the one being admitted, and those queued before it. The caller
// holds s.mu.
func (s *Service) queuePosition(id string) int {
	if id == s.taken {
		return 0
	}
	pos := slices.Index(s.queue, id)
	if s.active != nil || s.taken != "" {
		pos++
	}
	return pos
}

// next waits for a queued run; false once the service is closing.
func (s *Service) next() (string, bool) {
	for {
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			return "", false
		}
		if len(s.queue) > 0 {
			id := s.queue[0]
			s.queue = s.queue[1:]
			s.taken = id
			s.mu.Unlock()
			return id, true
		}
		s.mu.Unlock()
		<-s.wake
	}
}

// metricsStarted makes id the metrics' active run, with its token bounds
// when it judges token latencies.
func (s *Service) metricsStarted(log *slog.Logger, id string, spec api.RunSpec, ls loadgen.Settings) {
	if err := s.met.RunStarted(id, spec.Scenario, spec.Model, spec.Target, targetSamplesPerSecond(ls)); err != nil {
		log.Warn("metrics", "error", err)
	}
	if ls.UseTokenLatencies && ls.Scenario == trace.Server {
		if err := s.met.SetTokenBounds(time.Duration(ls.ServerTTFTLatencyNs), time.Duration(ls.ServerTPOTLatencyNs)); err != nil {
			log.Warn("metrics", "error", err)
		}
	}
}

func (s *Service) execute(id string) {
	log := s.log.With("run", id)
	defer s.untake(id) // whatever ends it: active, cancelled while queued, refused
	if s.taking != nil {
		s.taking(id)
	}
	rec, err := s.store.Get(id)
	if err != nil || rec.State != runstore.Queued {
		return // cancelled while queued
	}
	spec, planned, ok := s.admit(rec)
	if !ok {
		return
	}
	rspec := planned.Spec

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	a := &activeRun{id: id, cancel: cancel}
	if !s.activate(a) {
		return
	}
	defer func() {
		s.mu.Lock()
		s.active = nil
		s.mu.Unlock()
	}()

	if _, err := s.store.SetState(id, runstore.Running, ""); err != nil {
		log.Error("run store", "error", err)
		if !errors.Is(err, runstore.ErrNotSaved) {
			return
		}
		// Running in memory: the run goes on, and its end is kept too.
	}
	s.notify(id)
	s.metricsStarted(log, id, spec, rspec.Settings)

	// Progress goes to disk every second, so a run cut short by a crash
	// keeps what it had done readable.
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second)
	stopTick := make(chan struct{})
	wg.Go(func() {
		defer tick.Stop()
		for {
			select {
			case <-stopTick:
				return
			case <-tick.C:
				s.saveProgress(a)
				s.notify(id)
			}
		}
	})

	log.Info("run starting", "target", spec.Target, "model", spec.Model, "scenario", spec.Scenario)
	var out *runner.Outcome
	var runErr error
	switch {
	case planned.Search != nil:
		out, runErr = s.runSearch(ctx, a, rspec, *planned.Search, log)
	case spec.Workers >= 1:
		out, runErr = s.runDistributed(ctx, a, spec, rspec, log)
	default:
		out, runErr = runner.Run(ctx, rspec, runner.Options{
			Logger:      log,
			Started:     func(r *loadgen.Run) { a.run.Store(r) },
			Engine:      []loadgen.Option{loadgen.WithObserver(s.met.Observer())},
			Scraping:    a.scraping,
			ServerQueue: a.noteServerQueue,
		})
	}
	close(stopTick)
	wg.Wait()
	s.saveProgress(a)
	// The last reference to the engine's run, its trace and its records.
	a.run.Store(nil)

	started := out != nil && out.Result != nil
	state, reason, failure := endOf(a, out, runErr)
	s.sums.reload(id) // its files are written: its status shows them once it ends
	if failure != "" {
		s.met.RunEnded(id, string(runstore.Failed))
		s.fail(id, failure, runErr)
		return
	}
	if _, err := s.store.SetState(id, state, reason); err != nil {
		log.Error("run store", "error", err)
	}
	if err := s.met.RunEnded(id, string(state)); err != nil {
		log.Warn("metrics", "error", err)
	}
	s.notify(id)
	if started {
		log.Info("run ended", "state", state, "validity", out.Result.Validity, "reason", reason)
	} else {
		log.Info("run ended before its clock started", "state", state, "reason", reason, "error", runErr)
	}
}

// endOf is the state a run ends in and why; failure is the reason of a run
// that failed ("" otherwise). A run stopped before its engine's clock
// started (while probing the target or loading the samples) ends as the
// stop asked, like one stopped while issuing, and not failed: its error is
// only the stop's context error.
func endOf(a *activeRun, out *runner.Outcome, runErr error) (state runstore.State, reason, failure string) {
	started := out != nil && out.Result != nil
	before := ""
	if !started {
		before = " before the run's clock started"
	}
	switch {
	case started && runErr != nil:
		return runstore.Failed, "", "the run's files could not be written"
	case a.stoppedAs() == api.StateCancelled:
		return runstore.Cancelled, "cancelled through the API" + before, ""
	case a.stoppedAs() == api.StateInterrupted:
		return runstore.Interrupted, "the daemon was shut down during the run" + before, ""
	case !started:
		return runstore.Failed, "", "the run could not start"
	}
	return runstore.Done, string(out.Result.EndReason), ""
}

func (s *Service) fail(id, reason string, cause error) {
	if _, err := s.store.Fail(id, reason, cause); err != nil {
		s.log.Error("run store", "run", id, "error", err)
	}
	s.notify(id)
}

// admit makes a queued run's stored spec a run, or fails the run saying
// why. The spec was decoded and admitted at submission; it is admitted
// again under the limits in force now (a restart may have lowered them, a
// data file may be gone, the target may resolve outside the allowlist).
func (s *Service) admit(rec runstore.Record) (api.RunSpec, runspec.Run, bool) {
	var spec api.RunSpec
	if err := json.Unmarshal(rec.Spec, &spec); err != nil {
		s.fail(rec.ID, "the stored spec does not decode", err)
		return spec, runspec.Run{}, false
	}
	run := spec // with the literal header values, for this run only
	if err := s.restoreLiterals(rec.ID, &run); err != nil {
		s.fail(rec.ID, "a header value is gone", err)
		return spec, runspec.Run{}, false
	}
	planned, err := runspec.Admit(run, s.limits, s.store.Dir(rec.ID))
	if err != nil {
		s.fail(rec.ID, "the spec is no longer admitted", err)
		return spec, planned, false
	}
	if f := s.outsideFence(context.Background(), spec); f != nil {
		s.fail(rec.ID, f.reason, errors.New(f.msg))
		return spec, planned, false
	}
	// LOADGEND_MAX_DURATION bounds the run itself, not only the settings a
	// spec asks: max_duration 0 (LoadGen's "none") becomes the cap.
	ls := &planned.Spec.Settings
	if capMs := uint64(s.cfg.MaxDuration / time.Millisecond); ls.MaxDurationMs == 0 || ls.MaxDurationMs > capMs {
		ls.MaxDurationMs = capMs
	}
	if ls.Engine.DrainTimeoutMs == 0 || time.Duration(ls.Engine.DrainTimeoutMs)*time.Millisecond > s.cfg.DrainTimeout {
		ls.Engine.DrainTimeoutMs = uint64(s.cfg.DrainTimeout / time.Millisecond)
	}
	return spec, planned, true
}

// saveProgress writes progress.json; the store refuses once the run ended.
func (s *Service) saveProgress(a *activeRun) {
	p, ok := a.progress()
	if !ok {
		return
	}
	// A state a full disk kept in memory is written again once a second.
	if err := s.store.SaveUnsaved(); err != nil {
		s.log.Warn("run store", "error", err)
	}
	b, _ := json.Marshal(p)
	if err := s.store.WriteFile(a.id, runstore.ProgressFile, b); err != nil {
		if !errors.Is(err, runstore.ErrFinished) {
			s.log.Warn("writing progress", "run", a.id, "error", err)
		}
		return
	}
	s.sums.setProgress(a.id, p)
}

// targetSamplesPerSecond is the load a run asks for, in samples per second.
func targetSamplesPerSecond(st loadgen.Settings) float64 {
	switch st.Scenario.String() {
	case "Server":
		return st.ServerTargetQPS
	case "Offline":
		return st.OfflineExpectedQPS
	}
	return 0
}

// rateWindow is a completion rate over about the last five seconds.
type rateWindow struct {
	mu      sync.Mutex
	samples []rateSample
}

type rateSample struct {
	at time.Time
	n  int64
}

func (w *rateWindow) add(now time.Time, n int64) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples = append(w.samples, rateSample{now, n})
	for len(w.samples) > 2 && now.Sub(w.samples[1].at) >= 5*time.Second {
		w.samples = w.samples[1:]
	}
	first := w.samples[0]
	dt := now.Sub(first.at).Seconds()
	if dt <= 0 {
		return 0
	}
	return float64(n-first.n) / dt
}

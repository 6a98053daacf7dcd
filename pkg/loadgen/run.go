package loadgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// ErrAlreadyExecuted is returned by a second call to Run.Execute.
var ErrAlreadyExecuted = errors.New("loadgen: run already executed")

// Option configures a Run.
type Option func(*Run)

// WithClock replaces the system clock (tests use a virtual one).
func WithClock(c Clock) Option { return func(r *Run) { r.clock = c } }

// WithLogger sets the logger for run events (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(r *Run) { r.log = l } }

// Run is one performance run: its settings, the trace, and the state its
// queries are recorded in. The record is sized from the trace before the
// clock starts, so recording does not allocate; issuing allocates only the
// issue log's buffer every ~50,000 queries.
type Run struct {
	settings Settings
	tr       *trace.Trace
	sut      SUT
	// issuerSUTs are issuers 1 … N−1's SUTs (Engine.Issuers N > 1).
	issuerSUTs []SUT
	// iss are the run's issuers (iss[0] issues through sut); byShard has
	// them by shard, nil for a shard another process issues (WithShard).
	// shardN is the number of shards the trace is split into, shardK a
	// worker's shard (WithShard). split: Offline's one query is split.
	iss            []*issuer
	byShard        []*issuer
	shardK, shardN int
	split          bool
	stopMu         sync.Mutex
	stopFirst      StopReason                               // the first stop of the whole run (stopAll)
	shapeErr       error                                    // why a shaped pass ended early (under stopMu)
	shardSet       bool                                     // WithShard
	startAt        time.Time                                // WithStartAt; zero: start when ready
	startGate      func(context.Context) (time.Time, error) // WithStartGate; nil: none
	beforeStart    []func(context.Context)                  // WithBeforeStart
	startSpin      time.Duration                            // the start's last part spun: startSpin
	sink           RecordSink                               // WithRecordSink; nil: none
	qsl            QSL
	clock          Clock
	poller         Poller // the SUT, when it polls on the issuer's goroutine; nil otherwise
	log            *slog.Logger
	sutName        string
	obs            Observer               // nil: no telemetry
	warm           atomic.Pointer[warmup] // the warm-up, once it has started
	acc            *accuracySampler       // nil: no sampled accuracy log

	n, spq   int
	interval time.Duration // v0.5 MultiStream tick spacing
	bound    time.Duration // Server latency bound (0 elsewhere)

	// times holds every issued query's scheduled and issue times, a few
	// bytes each, one log per shard; only a shard's issuer writes its log,
	// the end of the run reads them.
	times *shardLogs
	// Per query, indexed by Query.ID: nil with one sample per query
	// outside v0.5 MultiStream, where a sample's slot in the record says
	// whether it was answered and whether it failed, and a query's
	// latency is its sample's (issue 28: the run keeps no other memory
	// per query but the issue log). ticks is v0.5 MultiStream's ticks
	// advanced; remaining counts a query's samples not yet answered,
	// queryDone is its latest completion (ns since start), queryFail says
	// whether a sample of it failed.
	ticks     []int32
	remaining []atomic.Int64
	queryDone []atomic.Int64
	queryFail []atomic.Bool

	// samples is the exact per-sample record, by sequence number. While a
	// sample is in flight its slot holds its query's scheduled time
	// (stats.LatencyRecord.Start): the completion path reads it there, and
	// the compare-and-swap that records its latency is the claim that
	// keeps a second completion of the sample from counting.
	samples *stats.LatencyRecord
	// preStarted: every sample was started before the clock (Offline's
	// one query, due at the start: millions of slots are not written
	// between its issue time and its hand-over to the SUT).
	preStarted bool
	queries    *stats.LatencyRecord // per query, by ID; nil with one sample per query (the samples' record is it)
	live       *stats.LiveHistogram
	// tok is the per-sample token record of a generative run (nil until
	// one is known: a GenerativeSUT, or the first completion with tokens).
	tok    atomic.Pointer[tokenRecord]
	tokObs TokenObserver // the observer, when it watches tokens

	started   atomic.Bool
	startedAt atomic.Pointer[time.Time]
	startTime time.Time // set before started is stored
	finished  atomic.Bool

	// The issued and done counts are the issuers' (queriesIssued,
	// queriesDone, samplesDone, lastDoneNs): a count every issuer wrote
	// would be a cache line the issuers' threads pass back and forth.
	failedS                       atomic.Int64
	drainedQ                      atomic.Int64 // queries close failed: never answered
	maxLateness                   atomic.Int64
	maxOutstanding                atomic.Int64 // closed loop: the most queries outstanding after an issue
	protocolErrs, lateCompletions atomic.Int64
	// streamingAtDrain is the SUT's count of answers still streaming when
	// the drain ended (StreamingSUT); written and read by Execute's
	// goroutine only.
	streamingAtDrain int64
	closed           atomic.Bool

	errMu       sync.Mutex
	errs        []string
	failedBySec []int64      // samples failed by a completion, per FailureSecond (see Timeline)
	failures    failureTally // by kind; under errMu
	classify    FailureClassifier
	scrub       func(string) string // WithTextScrubber; nil: none

	// Early verdict: settled by a completion, acted on by the issuer.
	earlyOn      bool
	planned      int64
	allowedPerf  int64
	allowedES    int64
	overTTFT     atomic.Int64 // token latencies: samples over each bound
	overTPOT     atomic.Int64
	verdictWon   atomic.Bool
	verdict      EarlyVerdict
	issueCancel  context.CancelFunc
	issueCancelM sync.Mutex

	merge *mergeState // a run rebuilt from its workers' records (NewMergedRun); nil otherwise

	sess *sessionState // a run with sessions (Settings.Sessions); nil otherwise
}

// NewRun validates the settings, asks the QSL for its counts and generates
// the trace (pure computation, before any clock starts).
func NewRun(s Settings, sut SUT, qsl QSL, opts ...Option) (*Run, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if sut == nil || qsl == nil {
		return nil, fmt.Errorf("%w: a SUT and a QSL are required", trace.ErrInvalidSettings)
	}
	total, perf := qsl.TotalSampleCount(), qsl.PerformanceSampleCount()
	if total <= 0 || perf <= 0 {
		return nil, fmt.Errorf("%w: QSL reports %d total and %d performance samples; both must be positive", trace.ErrInvalidSettings, total, perf)
	}
	tr, err := trace.New(s.TraceSettings(), trace.QSL{TotalSampleCount: uint64(total), PerformanceSampleCount: uint64(perf)})
	if err != nil {
		return nil, fmt.Errorf("generating the trace: %w", err)
	}
	r := &Run{settings: s, tr: tr, sut: sut, qsl: qsl, log: slog.Default(), startSpin: startSpin}
	for _, o := range opts {
		o(r)
	}
	if err := r.setUpIssuers(); err != nil {
		return nil, fmt.Errorf("%w: %w", trace.ErrInvalidSettings, err)
	}
	r.times = newShardLogs(r.shardN)
	if r.clock == nil {
		r.clock = NewSystemClock(time.Duration(s.Engine.SpinThresholdNs))
	}
	r.n, r.spq = tr.Len(), tr.SamplesPerQuery
	if s.Scenario == trace.MultiStream && s.Ruleset == RulesetV05 {
		r.interval = s.MultiStreamInterval()
	}
	var recOpts []stats.RecordOption
	if s.Scenario == trace.Server {
		r.bound = time.Duration(s.ServerTargetLatencyNs)
		recOpts = append(recOpts, stats.WithBound(r.bound))
	}
	nSamples := r.n * r.spq
	if r.samples, err = stats.NewLatencyRecord(nSamples, recOpts...); err != nil {
		return nil, err
	}
	if r.spq != 1 {
		if r.queries, err = stats.NewLatencyRecord(r.n); err != nil {
			return nil, err
		}
	}
	r.live = stats.NewLiveHistogram()
	if r.interval > 0 {
		r.ticks = make([]int32, r.n)
	}
	if r.spq != 1 || r.interval > 0 {
		r.remaining = make([]atomic.Int64, r.n)
		r.queryDone = make([]atomic.Int64, r.n)
		r.queryFail = make([]atomic.Bool, r.n)
	}
	if s.Sessions != nil {
		if r.sess, err = newSessionState(s, r.n); err != nil {
			return nil, err
		}
	}
	if g, ok := sut.(GenerativeSUT); ok && g.Generative() {
		r.tok.Store(newTokenRecord(nSamples))
	}
	r.tokObs, _ = r.obs.(TokenObserver)
	if p := AccuracyLogProbability(s, tr.Settings); p > 0 {
		if r.acc, err = newAccuracySampler(p, s.AccuracyLogRNGSeed, nSamples, tr.DistributionEnd); err != nil {
			return nil, err
		}
	}
	// The early verdict counts samples over the latency bound, or, with
	// token latencies, over the TTFT and the TPOT bound. A shaped run is
	// judged by its SLO, if at all, and runs its whole shape: a ramp's
	// later stages are what capacity planning asks about.
	if s.Engine.EarlyVerdict && s.Shape == nil {
		if err := r.planEarlyVerdict(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// planEarlyVerdict fixes, for the planned sample count, how many samples
// may be over the bound before the verdict is certainly INVALID. A Fail for
// the planned count is a Fail for any shorter run too: both allowances only
// grow with the count.
func (r *Run) planEarlyVerdict() error {
	r.earlyOn = true
	r.allowedPerf, r.allowedES = math.MaxInt64, math.MaxInt64
	if r.settings.Scenario != trace.Server {
		// Only failed samples settle the other scenarios early.
		return nil
	}
	r.planned = int64(r.n)
	if m := r.settings.MaxQueryCount; m > 0 && m < uint64(r.planned) {
		r.planned = int64(m)
	}
	p := r.settings.ServerTargetLatencyPercentile
	a, err := stats.MaxOverForPercentile(r.planned, p)
	if err != nil {
		return fmt.Errorf("%w: server_target_latency_percentile: %w", trace.ErrInvalidSettings, err)
	}
	r.allowedPerf = a
	if r.settings.Ruleset == RulesetLoadGen6 {
		f, err := stats.NewMinPassingFinder(p, stats.EarlyStoppingConfidence)
		if err != nil {
			return fmt.Errorf("%w: server_target_latency_percentile: %w", trace.ErrInvalidSettings, err)
		}
		// A run too short for early stopping at all is doomed from the
		// start; stopping it at query 0 would tell nobody anything.
		if es := f.MaxOverLatency(r.planned); es >= 0 {
			r.allowedES = es
		}
	}
	return nil
}

// Trace returns the run's pre-generated trace.
func (r *Run) Trace() *trace.Trace { return r.tr }

// Settings returns the run's settings.
func (r *Run) Settings() Settings { return r.settings }

// Samples returns the exact per-sample record (indexed by sample sequence
// number, i.e. Query.FirstSample+j), e.g. for .hlog intervals. Read it only
// after Execute has returned.
func (r *Run) Samples() *stats.LatencyRecord { return r.samples }

// Execute loads the QSL (untimed), starts the clock, issues the trace by
// scenario, waits for outstanding responses (bounded by the drain timeout)
// and returns the result. A failing, slow or silent SUT does not make it
// return an error: the result says how the run ended and keeps everything
// recorded. Errors are for runs that could not start (QSL load failure,
// second call).
func (r *Run) Execute(ctx context.Context) (*Result, error) {
	if !r.started.CompareAndSwap(false, true) {
		return nil, ErrAlreadyExecuted
	}
	r.sutName = r.sut.Name()
	r.startIssuers()
	r.poller = r.iss[0].poller // the warm-up's
	if c, ok := r.clock.(interface{ Close() error }); ok {
		defer c.Close()
	}
	if err := r.qsl.Load(ctx, r.tr.LoadedSet[:r.tr.DistributionEnd]); err != nil {
		r.finished.Store(true)
		return nil, fmt.Errorf("loading the QSL: %w", err)
	}
	// The SUT's context outlives a cancelled ctx until the drain ends, so
	// in-flight requests can still answer.
	sutCtx, sutCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer sutCancel()
	issueCtx, issueCancel := context.WithCancel(ctx)
	defer issueCancel()
	r.issueCancelM.Lock()
	r.issueCancel = issueCancel
	r.issueCancelM.Unlock()

	var warm *Warmup
	if r.settings.Engine.WarmupMs > 0 {
		warm = r.warmUp(ctx)
	}
	if r.settings.Scenario == trace.Offline {
		for _, is := range r.iss {
			for seq := is.k; seq < r.n*r.spq; seq += r.shardN {
				_ = r.samples.Start(seq, 0)
			}
		}
		r.preStarted = true
	}
	if err := r.waitForStart(ctx); err != nil {
		r.finished.Store(true)
		return nil, err
	}
	wall := time.Now()
	r.startTime = r.clock.Now()
	if !r.startAt.IsZero() {
		// The common start itself, not when the wait for it ended: the
		// shards' schedules line up to the nanosecond.
		wall, r.startTime = wall.Add(r.startAt.Sub(r.startTime)), r.startAt
	}
	r.startedAt.Store(&r.startTime)
	r.log.Info("run started", "scenario", r.settings.Scenario.String(), "ruleset", string(r.settings.Ruleset),
		"queries", r.n, "samples_per_query", r.spq, "sut", r.sutName)

	reason, drained := r.issueTimed(ctx, issueCtx, sutCtx, warm)
	end := r.clock.Now()
	for _, is := range r.iss {
		if ss, ok := is.sut.(StreamingSUT); ok {
			// Before the cancel: the cancelled answers end at once.
			r.streamingAtDrain += int64(ss.Streaming())
		}
	}
	// Closed before the SUT is cancelled: an answer the cancel ends is one
	// that had not come by the drain timeout, unanswered, not a failure of
	// its own that raced close on another goroutine.
	unanswered := r.close()
	sutCancel()
	r.finished.Store(true)
	switch reason {
	case StopCompleted:
	case StopStalled, StopRanOut, StopTooManyInFlight, StopShapeEnded:
		// The SUT or the settings cut the run short: worth a warning.
		r.log.Warn("run ended early", "reason", string(reason))
	default:
		// Asked for (a cancel, an early verdict, a bound the settings set):
		// the result says so; nothing went wrong.
		r.log.Info("run ended early", "reason", string(reason))
	}
	res := r.result(reason, !drained, unanswered, wall, end)
	res.Warmup = warm
	res.Tokens = r.tokenResult(res)
	r.shapedResult(res)
	r.shapeVerdict(res)
	res.Sessions = r.sessionResult()
	for _, is := range r.iss {
		if rs, ok := is.sut.(Resender); ok {
			res.RequestsResent += int64(rs.Resends())
		}
	}
	if o, ok := r.obs.(ResendObserver); ok {
		o.Resent(uint64(res.RequestsResent))
	}
	r.log.Info("run finished", "validity", res.Validity, "queries", res.QueriesIssued, "failed_samples", res.SamplesFailed,
		"record_bytes", r.recordBytes())
	return res, nil
}

// issueTimed issues the timed run, unless the warm-up was cancelled or
// its pass over the load shape ended early, and says why it stopped and
// whether every issued query was answered by the drain's end.
func (r *Run) issueTimed(ctx, issueCtx, sutCtx context.Context, warm *Warmup) (StopReason, bool) {
	reason, drained := StopCancelled, true // cancelled during the warm-up: nothing timed is issued
	switch {
	case r.shapeError() != nil:
		reason = StopShapeEnded // the warm-up's pass ended early: the timed run's would too
	case warm == nil || ctx.Err() == nil:
		if r.split {
			r.issueSplit()
		}
		// Each issuer drains its queries from the moment it stopped.
		reason, drained = r.issueAll(issueCtx, sutCtx)
	}
	for _, is := range r.iss {
		// A stop before the issuers ran (the warm-up's) leaves their
		// passes open; each may hold a trace file.
		_ = is.cur.Close()
	}
	return r.cancelReason(ctx, reason), drained
}

// recordBytes is what the run keeps for its whole length, in bytes: the
// latency record's slots and the issue log (bench/longrun.sh subtracts it
// from max RSS to show that nothing else grows with the run).
func (r *Run) recordBytes() int64 {
	b := int64(r.n)*int64(r.spq)*8 + int64(r.times.size())
	if r.sess != nil {
		b += int64(r.n) * 6 // each query's session and turn
	}
	return b
}

// issueScenario issues issuer is's shard of the trace by scenario; it
// returns why it stopped.
func (r *Run) issueScenario(issueCtx, sutCtx context.Context, is *issuer) StopReason {
	switch {
	case r.sess != nil:
		return r.issueSessions(issueCtx, sutCtx, is)
	case r.settings.Scenario == trace.Server:
		return r.issueServer(issueCtx, sutCtx, is)
	case r.settings.Scenario == trace.Offline:
		return r.issueOffline(issueCtx, sutCtx, is)
	case r.settings.Engine.Concurrency > 0:
		return r.issueConcurrent(issueCtx, sutCtx, is)
	case r.interval > 0:
		return r.issueTicks(issueCtx, sutCtx, is)
	}
	return r.issueClosedLoop(issueCtx, sutCtx, is)
}

// cancelReason is why the run ended, given that it stopped issuing for
// reason: a cancel of ctx, before or during the drain, makes it end
// cancelled (interrupted when the cause is ErrInterrupted), unless an early
// verdict stopped it or the SUT had stalled.
func (r *Run) cancelReason(ctx context.Context, reason StopReason) StopReason {
	switch {
	case reason == StopCancelled && r.verdictWon.Load():
		return StopEarlyVerdict
	case reason == StopStalled || reason == StopEarlyVerdict:
		return reason
	case ctx.Err() == nil:
		return reason
	case errors.Is(context.Cause(ctx), ErrInterrupted):
		return StopInterrupted
	}
	return StopCancelled
}

// close stops accepting completions, waits out completions in progress, and
// fails every issued sample that never answered. It returns their count.
func (r *Run) close() int64 {
	r.closed.Store(true)
	for _, is := range r.iss {
		for is.active.Load() != 0 {
			runtimeYield()
		}
	}
	var unanswered int64
	r.eachIssued(func(q int) {
		if r.answered(q) {
			return
		}
		n := 0
		for j := 0; j < r.spq; j++ {
			seq := q*r.spq + j
			if r.samples.FailInFlight(seq) {
				r.noteTokenFailure("unanswered", seq, seq+1)
				r.sinkUnanswered(seq)
				n++
			}
		}
		unanswered += int64(n)
		r.failedS.Add(int64(n))
		r.drainedQ.Add(1)
		if r.queryFail != nil {
			r.queryFail[q].Store(true)
		}
		if r.queries != nil {
			_ = r.queries.Fail(q)
		}
		if r.obs != nil {
			if n > 0 {
				r.obs.Completed(q, n, 0, ErrUnanswered)
			}
			r.obs.QueryDone(q, true)
		}
	})
	if unanswered > 0 {
		// Counted apart from FailedBySecond: Timeline puts them in the
		// last second.
		err := ErrUnanswered
		msg := func() string { return fmt.Sprintf("%d samples got no response before the drain timeout", unanswered) }
		if s := min(r.streamingAtDrain, unanswered); s > 0 {
			// The failures' example says so too, still classified unanswered.
			streaming := fmt.Sprintf("%d of them still streaming at the drain timeout (tokens had come, the end had not)", s)
			err = fmt.Errorf("%w: %s", ErrUnanswered, streaming)
			msg = func() string {
				return fmt.Sprintf("%d samples got no complete answer before the drain timeout: %s", unanswered, streaming)
			}
		}
		r.noteFailure(err, unanswered, -1, msg)
	}
	return unanswered
}

// answered reports whether every sample of issued query q was answered
// (or failed by a completion).
func (r *Run) answered(q int) bool {
	if r.remaining != nil {
		return r.remaining[q].Load() == 0
	}
	_, inFlight := r.samples.InFlightScheduled(q) // one sample per query: its sequence number is q
	return !inFlight
}

// noteFailure records n samples failed by err: by kind (the classifier
// walks err's chain, outside the lock: only failures pay it), by the second
// of off (the completion's offset; negative: not counted by second), and
// msg's text among the first engine.max_error_messages. One lock for all
// three.
func (r *Run) noteFailure(err error, n, off int64, msg func() string) (outcome string) {
	classify := r.classify
	if classify == nil {
		classify = defaultClassifier
	}
	o, s := classify(err)
	r.errMu.Lock()
	r.failures.add(failureKey{o, s}, err, n, r.scrubbed)
	if off >= 0 {
		r.countFailedAt(off, n)
	}
	// A merged run keeps the workers' own messages (FinishMerged), not
	// texts made up from their records.
	if r.merge == nil && len(r.errs) < r.settings.Engine.MaxErrorMessages {
		r.errs = append(r.errs, r.scrubbed(msg()))
	}
	r.errMu.Unlock()
	return o
}

func (r *Run) noteError(msg string) {
	r.errMu.Lock()
	if len(r.errs) < r.settings.Engine.MaxErrorMessages {
		r.errs = append(r.errs, msg)
	}
	r.errMu.Unlock()
}

// eachIssued calls fn with every issued query, shard by shard.
func (r *Run) eachIssued(fn func(q int)) {
	if r.split {
		if r.queriesIssued() > 0 {
			fn(0)
		}
		return
	}
	for _, is := range r.iss {
		for i := range int(is.issuedQ.Load()) {
			fn(is.k + i*r.shardN)
		}
	}
}

// issue hands query q of its shard to the issuer's SUT with the given
// scheduled and issue times.
func (is *issuer) issue(ctx context.Context, q trace.Query, sched, now time.Time) {
	r := is.r
	is.noteIssued(q, int64(sched.Sub(r.startTime)), int64(now.Sub(r.startTime)))
	i := q.Index
	is.sut.IssueQuery(ctx, Query{ID: i, FirstSample: i * r.spq, Samples: q.Samples, Scheduled: sched, Issued: now,
		Stage: q.Stage, Model: q.Model, Request: q.Request}, is.done)
}

// noteIssued is the bookkeeping of the issuer's query q, scheduled at s and
// issued at at (ns since the start): the issue log, the lateness, the
// record's slots, the counters. issue and a merged run's MergeIssued share
// it.
func (is *issuer) noteIssued(q trace.Query, s, at int64) {
	r := is.r
	i := q.Index
	r.times.add(is.k, s, at)
	if r.sink != nil {
		r.sink.QueryIssued(is.k, i, s, at)
	}
	atomicMax(&r.maxLateness, at-s)
	if r.remaining != nil {
		r.remaining[i].Store(int64(len(q.Samples)))
	}
	if !r.preStarted {
		for seq := i * r.spq; seq < (i+1)*r.spq; seq++ {
			_ = r.samples.Start(seq, max(s, 0)) // within the record, never started before
		}
	}
	if r.acc != nil {
		// Before issuedQ: a completion that sees the query issued sees its
		// logged samples' QSL indices.
		r.acc.issued(i*r.spq, q.Samples)
	}
	is.issuedS += int64(len(q.Samples))
	is.issuedQ.Add(1)
	if r.obs != nil {
		r.obs.Issued(i, len(q.Samples), time.Duration(at-s))
	}
}

// issueSplit issues Offline's one query when its samples are split
// between shards: logged and counted once, its samples in flight since the
// start; each issuer then hands its SUT its share (issueShare).
func (r *Run) issueSplit() {
	r.noteSplit(int64(r.clock.Now().Sub(r.startTime)))
}

// noteSplit is issueSplit's bookkeeping, the query issued at at ns since
// the start; a merged run's MergeIssued shares it.
func (r *Run) noteSplit(at int64) {
	q, _ := r.tr.Cursor().Next()
	r.times.add(0, 0, at) // query 0, in shard 0's log whichever shards are here
	atomicMax(&r.maxLateness, at)
	if r.sink != nil {
		for _, is := range r.iss {
			r.sink.QueryIssued(is.k, 0, 0, at)
		}
	}
	var shares int
	for _, is := range r.iss {
		shares += len(is.share)
	}
	if r.remaining != nil { // nil with one sample a query: its slot says
		r.remaining[0].Store(int64(shares))
	}
	if r.acc != nil {
		r.acc.issued(0, q.Samples)
	}
	for _, is := range r.iss {
		is.issuedQ.Store(1)
	}
	if r.obs != nil {
		r.obs.Issued(0, shares, time.Duration(at))
	}
}

// issueShare hands the issuer's SUT its share of Offline's split query:
// its sample j is the query's sample k + j·N (Query.Stride).
func (is *issuer) issueShare(ctx context.Context, now time.Time) {
	r := is.r
	is.issuedS = int64(len(is.share))
	if len(is.share) == 0 {
		return
	}
	is.sut.IssueQuery(ctx, Query{ID: 0, FirstSample: is.k, Stride: r.shardN, Samples: is.share, Scheduled: r.startTime, Issued: now}, is.done)
}

// complete records a completion; it is the done callback of every query.
// is is the issuer whose SUT called it: its counters count it.
func (r *Run) complete(c Completion, is *issuer) {
	is.active.Add(1)
	defer is.active.Add(-1)
	if r.closed.Load() {
		r.lateCompletions.Add(1)
		return
	}
	at := c.At
	if at.IsZero() {
		at = r.clock.Now()
	}
	q := c.Query
	if !r.isIssued(q) || c.Count <= 0 || c.First < 0 || c.First > r.spq-c.Count {
		if w := r.warm.Load(); w != nil && q >= w.base {
			w.complete(c) // a late warm-up answer: it measures nothing
			return
		}
		r.protocolErrs.Add(1)
		r.noteError(fmt.Sprintf("protocol: completion of query %d samples [%d, %d+%d) does not match an issued query", q, c.First, c.First, c.Count))
		return
	}
	r.record(c, int64(at.Sub(r.startTime)), is)
}

// record is the bookkeeping of completion c, checked against the issued
// queries, at off ns since the start: the record's slots, the counters, the
// live histogram, the token record, failures by kind and by second, and the
// early verdict. complete and a merged run's MergeSample share it, so a
// worker's sample counts exactly as a local completion does. is is the
// issuer whose counters count it.
func (r *Run) record(c Completion, off int64, is *issuer) {
	q := c.Query
	base := q * r.spq
	// Every sample of a query shares its scheduled time; read it before
	// any of the samples is finished (a finished slot holds its latency).
	sched, inFlight := int64(0), false
	for j := c.First; j < c.First+c.Count && !inFlight; j++ {
		sched, inFlight = r.samples.InFlightScheduled(base + j)
	}
	lat := time.Duration(max(off-sched, 0)) // stamped before it was due: a clock artefact
	n := r.recordSamples(&c, base, off, sched, lat, is)
	if n == 0 {
		return
	}
	if c.Tokens > 0 && c.Err == nil {
		r.completeTokens(&c, q, base, off, sched)
	}
	if r.obs != nil {
		r.obs.Completed(q, int(n), lat, c.Err)
	}
	if c.Err != nil {
		r.failedS.Add(n)
		if r.queryFail != nil {
			r.queryFail[q].Store(true)
		}
		o := r.noteFailure(c.Err, n, max(off, 0), func() string {
			return fmt.Sprintf("query %d samples [%d, %d): %v", q, c.First, c.First+c.Count, c.Err)
		})
		if c.Tokens > 0 || c.InputTokens > 0 {
			r.keepMeasured(&c, base+c.First, base+c.First+c.Count, off, sched)
		}
		r.noteTokenFailure(o, base+c.First, base+c.First+c.Count)
	}
	is.doneS.Add(n)
	if r.queryDone != nil {
		atomicMax(&r.queryDone[q], off)
	}
	atomicMax(&is.lastDone, off)
	if r.sess != nil {
		// Before the query counts done: the issuer that wakes for it
		// finds the follow-up it makes due.
		r.sess.answered(q, off, c.Err != nil)
	}
	if r.remaining == nil || r.remaining[q].Add(-n) == 0 {
		r.finishQuery(q, sched, c.Err != nil)
	}
	if r.earlyOn {
		r.checkEarlyVerdict(off)
	}
}

// recordSamples records completion c's samples (base its query's first
// sample's sequence number) answered or failed at off, lat after their
// scheduled time sched; it returns how many it recorded (a sample already
// finished is a protocol error, not recorded again).
func (r *Run) recordSamples(c *Completion, base int, off, sched int64, lat time.Duration, is *issuer) int64 {
	var rec SampleRecord
	if r.sink != nil {
		rec = r.sampleRecord(c, lat, off, sched)
	}
	n := int64(0)
	for j := c.First; j < c.First+c.Count; j++ {
		if c.Err != nil {
			if !r.samples.FailInFlight(base + j) {
				r.protocolErrs.Add(1)
				continue
			}
		} else {
			if _, ok := r.samples.Finish(base+j, off); !ok {
				r.protocolErrs.Add(1)
				continue
			}
			r.live.RecordIn(is.k, lat) // the issuer's own shard
			if r.acc != nil && len(c.Data) == c.Count {
				r.acc.add(base+j, c, j)
			}
		}
		if r.sink != nil {
			rec.Seq = base + j
			r.sink.SampleDone(rec)
		}
		n++
	}
	return n
}

// completeTokens records a successful generative completion of query q
// (base its first sample's sequence number) and tells the observer.
func (r *Run) completeTokens(c *Completion, q, base int, off, sched int64) {
	ttft, tpot := r.recordTokens(c, base+c.First, base+c.First+c.Count, off, sched)
	if r.earlyOn && r.settings.UseTokenLatencies {
		// As judgeTokenLatencies counts them: a sample of fewer than two
		// tokens has LoadGen's TPOT of −(E2E − TTFT), never over the bound.
		if ttft > time.Duration(r.settings.ServerTTFTLatencyNs) {
			r.overTTFT.Add(int64(c.Count))
		}
		if c.Tokens >= 2 && tpot > time.Duration(r.settings.ServerTPOTLatencyNs) {
			r.overTPOT.Add(int64(c.Count))
		}
	}
	if r.tokObs != nil {
		r.tokObs.Tokens(q, c.Tokens, c.InputTokens, ttft, tpot, c.Gaps)
	}
}

// finishQuery counts query q answered; sched is its scheduled time and
// failed whether the completion that finished it failed (with one sample
// per query, whether the query failed).
func (r *Run) finishQuery(q int, sched int64, failed bool) {
	if r.queryFail != nil {
		failed = r.queryFail[q].Load()
	}
	switch {
	case r.queries == nil:
	case failed:
		_ = r.queries.Fail(q)
	default:
		lat := r.queryDone[q].Load() - sched
		_ = r.queries.Record(q, time.Duration(max(lat, 0)))
	}
	if r.obs != nil {
		r.obs.QueryDone(q, failed)
	}
	if r.split {
		for _, is := range r.iss {
			is.doneQ.Add(1)
			is.wake()
		}
		return
	}
	is := r.byShard[q%r.shardN]
	is.doneQ.Add(1)
	is.wake()
}

// wake tells the issuer, if it waits, that a query of its has completed.
func (is *issuer) wake() {
	select {
	case is.notify <- struct{}{}:
	default:
	}
}

// isIssued reports whether query q has been issued (in this process).
func (r *Run) isIssued(q int) bool {
	if q < 0 || q >= r.n {
		return false
	}
	if r.split {
		return r.queriesIssued() > 0
	}
	is := r.byShard[q%r.shardN]
	return is != nil && int64(q/r.shardN) < is.issuedQ.Load()
}

func (r *Run) checkEarlyVerdict(off int64) {
	failed := r.failedS.Load()
	over, bound := r.samples.Over(), "latency"
	if r.settings.UseTokenLatencies {
		// Query latency decides nothing; each token bound has the
		// percentile's and early stopping's allowance on its own.
		over, bound = r.overTTFT.Load(), "TTFT"
		if tpot := r.overTPOT.Load(); tpot > over {
			over, bound = tpot, "TPOT"
		}
	}
	var why string
	switch {
	case failed > 0:
		why = "failed samples make the run INVALID"
	case over > r.allowedPerf:
		why = fmt.Sprintf("%d samples over the %s bound exceed the %d the percentile allows for %d planned samples", over, bound, r.allowedPerf, r.planned)
	case over > r.allowedES:
		why = fmt.Sprintf("%d samples over the %s bound exceed the %d early stopping allows for %d planned samples", over, bound, r.allowedES, r.planned)
	default:
		return
	}
	if !r.verdictWon.CompareAndSwap(false, true) {
		return
	}
	r.verdict = EarlyVerdict{Stopped: true, AtNs: off, Reason: why, CompletedSamples: r.samplesDone(),
		FailedSamples: failed, OverLatency: over, PlannedSamples: r.planned,
		AllowedOverPercentile: r.allowedPerf, AllowedOverEarlyStopping: r.allowedES}
	r.issueCancelM.Lock()
	if r.issueCancel != nil {
		r.issueCancel()
	}
	r.issueCancelM.Unlock()
}

func atomicMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/pkg/rng"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Accuracy mode (LoadGen's AccuracyOnly; LOADGEN-REFERENCE §2, §3.2): the
// accuracy set, [0, accuracy_sample_count), is shuffled by an mt19937 seeded
// with qsl_rng_seed and cut into loadable sets of performance_sample_count
// (the last may be shorter; MultiStream pads each with its first
// samples_per_query-1 entries). Each set is loaded in turn and its queries
// are generated as GenerateQueries does in accuracy mode: a fresh
// sample_rng shuffles the positions [0, stride, 2·stride, … < set length)
// (stride = samples per query for MultiStream, else 1) and the queries take
// them in that order, so every sample of the set is issued exactly once
// (MultiStream: spq contiguous loaded samples per position, the last query
// reaching into the padding). Offline sends the whole set as one query.
// Server queries keep the Poisson schedule of a fresh schedule_rng; the
// other scenarios issue the next query when the previous one has completed.
// Every response is logged.

// AccuracySet is one loadable set of an accuracy run.
type AccuracySet struct {
	// Loaded is the set's QSL indices in load order, with MultiStream's
	// padding at the end.
	Loaded []int
	// End is the set's length without padding.
	End int
	// Queries are the set's queries: QSL indices, in issue order.
	Queries [][]int
	// Scheduled are the Server queries' offsets from the set's start (nil
	// for the other scenarios).
	Scheduled []time.Duration
	// Duration is LoadGen's generated_query_duration for the set: the
	// schedule one inter-arrival past the last query (Server's Poisson
	// draws, the constant period 1/target_qps otherwise).
	Duration time.Duration
}

// AccuracySets generates an accuracy run's loadable sets and queries for
// the settings and the QSL's counts.
func AccuracySets(s Settings, total, perf int) ([]AccuracySet, error) {
	if total <= 0 || perf <= 0 {
		return nil, fmt.Errorf("%w: QSL reports %d total and %d performance samples; both must be positive", trace.ErrInvalidSettings, total, perf)
	}
	e, err := trace.EffectiveSettings(s.TraceSettings(), trace.QSL{TotalSampleCount: uint64(total), PerformanceSampleCount: uint64(perf)})
	if err != nil {
		return nil, err
	}
	accCount := uint64(total)
	if s.AccuracySampleCountOverride != 0 {
		accCount = s.AccuracySampleCountOverride
	}
	if accCount > uint64(total) {
		return nil, fmt.Errorf("%w: accuracy_sample_count_override %d exceeds the QSL's %d samples", trace.ErrInvalidSettings, accCount, total)
	}
	if accCount > trace.MaxSamples {
		return nil, fmt.Errorf("%w: %d accuracy samples", trace.ErrTooLarge, accCount)
	}
	all := make([]int, accCount)
	for i := range all {
		all[i] = i
	}
	rng.Shuffle(rng.NewMT19937(e.QSLRNGSeed), all)
	size := int(e.PerformanceSampleCount)
	spq := int(e.SamplesPerQuery)
	var sets []AccuracySet
	for from := 0; from < len(all); from += size {
		end := min(from+size, len(all))
		set := AccuracySet{Loaded: append([]int(nil), all[from:end]...), End: end - from}
		if e.Scenario == trace.MultiStream {
			for i := range spq - 1 {
				set.Loaded = append(set.Loaded, set.Loaded[i%set.End])
			}
		}
		set.Queries, set.Scheduled, set.Duration = accuracyQueries(e, set.Loaded, set.End)
		sets = append(sets, set)
	}
	return sets, nil
}

// accuracyQueries is GenerateQueries in accuracy mode for one set: the
// queries, Server's schedule, and the generated duration.
func accuracyQueries(e trace.Effective, loaded []int, end int) ([][]int, []time.Duration, time.Duration) {
	sampleRNG := rng.NewMT19937(e.SampleIndexRNGSeed)
	stride := 1
	if e.Scenario == trace.MultiStream {
		stride = int(e.SamplesPerQuery)
	}
	var order []int
	for i := 0; i < end; i += stride {
		order = append(order, i)
	}
	rng.Shuffle(sampleRNG, order)
	var queries [][]int
	switch e.Scenario {
	case trace.Offline:
		q := make([]int, len(order))
		for i, k := range order {
			q[i] = loaded[k]
		}
		return [][]int{q}, nil, constantPeriod(e)
	case trace.MultiStream:
		for _, k := range order {
			queries = append(queries, loaded[k:k+stride:k+stride])
		}
		return queries, nil, time.Duration(len(queries)) * constantPeriod(e)
	}
	for _, k := range order {
		queries = append(queries, loaded[k:k+1:k+1])
	}
	if e.Scenario != trace.Server {
		return queries, nil, time.Duration(len(queries)) * constantPeriod(e)
	}
	scheduleRNG := rng.NewMT19937(e.ScheduleRNGSeed)
	sched := make([]time.Duration, len(queries))
	var t time.Duration
	for i := range sched {
		sched[i] = t
		t += rng.DurationCastNs(rng.Exponential(scheduleRNG, e.TargetQPS))
	}
	return queries, sched, t
}

// constantPeriod is the inter-arrival LoadGen's schedule uses for every
// scenario but Server; it only sets generated_query_duration here.
func constantPeriod(e trace.Effective) time.Duration {
	return rng.DurationCastNs(1.0 / e.TargetQPS)
}

// AccuracyResult is a finished accuracy run.
type AccuracyResult struct {
	Scenario string `json:"scenario"`
	SUTName  string `json:"sut_name"`
	// Sets is the number of loadable sets run; Samples the samples issued.
	Sets             int   `json:"sets"`
	QueriesIssued    int   `json:"queries_issued"`
	SamplesIssued    int64 `json:"samples_issued"`
	SamplesCompleted int64 `json:"samples_completed"`
	SamplesFailed    int64 `json:"samples_failed"`
	// Stalled: some sample was still unanswered the drain timeout after
	// issuing stopped; unanswered samples count as failed.
	Stalled    bool     `json:"stalled"`
	Cancelled  bool     `json:"cancelled"`
	DurationNs int64    `json:"duration_ns"`
	Errors     []string `json:"errors,omitempty"`
	// Entries are the responses in completion order: every sample that
	// answered, with its bytes.
	Entries []AccuracyEntry `json:"-"`
	// Spans are the wall-clock start and end of each set run, for the
	// detail log's power_begin and power_end.
	Spans []AccuracySpan `json:"-"`
}

// AccuracySpan is when one accuracy set's queries ran: from its first
// issue to its last answer (or the end of the wait).
type AccuracySpan struct{ Start, End time.Time }

// Complete reports whether every sample was issued and answered.
func (r *AccuracyResult) Complete() bool {
	return !r.Stalled && !r.Cancelled && r.SamplesFailed == 0 && r.SamplesCompleted == r.SamplesIssued
}

// AccuracyRun is one accuracy-mode run.
type AccuracyRun struct {
	settings Settings
	sets     []AccuracySet
	sut      SUT
	qsl      QSL
	clock    Clock
	log      *slog.Logger
	scrub    func(string) string // WithTextScrubber; nil: none

	mu       sync.Mutex
	entries  []AccuracyEntry
	got      []bool  // by sample sequence number
	qsls     [][]int // by query ID: its samples
	firsts   []int   // by query ID: its first sample's sequence number
	errs     []string
	failed   int64
	done     int64
	issued   int64
	closed   bool
	progress chan struct{}
}

// ErrAccuracyCapture is a completion that carries no response bytes: the
// SUT was not asked to capture responses.
var ErrAccuracyCapture = errors.New("accuracy mode: the SUT returned no response bytes")

// NewAccuracyRun validates the settings (in accuracy mode; Mode may be
// AccuracyOnly or PerformanceOnly) and generates the sets and queries. The
// SUT must fill Completion.Data.
func NewAccuracyRun(s Settings, sut SUT, qsl QSL, opts ...Option) (*AccuracyRun, error) {
	check := s
	check.Mode = trace.PerformanceOnly
	if err := check.Validate(); err != nil {
		return nil, err
	}
	if s.Mode != trace.AccuracyOnly && s.Mode != trace.PerformanceOnly {
		return nil, fmt.Errorf("%w: mode: an accuracy run cannot be %v", trace.ErrInvalidSettings, s.Mode)
	}
	if sut == nil || qsl == nil {
		return nil, fmt.Errorf("%w: a SUT and a QSL are required", trace.ErrInvalidSettings)
	}
	sets, err := AccuracySets(s, qsl.TotalSampleCount(), qsl.PerformanceSampleCount())
	if err != nil {
		return nil, err
	}
	s.Mode = trace.AccuracyOnly
	// Options are written for Run; apply them to a scratch Run and keep
	// what accuracy mode uses.
	var scratch Run
	for _, o := range opts {
		o(&scratch)
	}
	a := &AccuracyRun{settings: s, sets: sets, sut: sut, qsl: qsl, clock: scratch.clock, log: scratch.log, scrub: scratch.scrub, progress: make(chan struct{}, 1)}
	if a.log == nil {
		a.log = slog.Default()
	}
	return a, nil
}

// Sets returns the run's loadable sets and their queries.
func (a *AccuracyRun) Sets() []AccuracySet { return a.sets }

// Settings returns the run's settings (Mode AccuracyOnly).
func (a *AccuracyRun) Settings() Settings { return a.settings }

// Execute runs every set: load it (untimed), issue its queries, wait for
// every response. Like Run.Execute, a failing SUT does not make it return an
// error; the result counts the failures.
func (a *AccuracyRun) Execute(ctx context.Context) (*AccuracyResult, error) {
	if a.clock == nil {
		c := NewSystemClock(time.Duration(a.settings.Engine.SpinThresholdNs))
		defer c.Close()
		a.clock = c
	}
	res := &AccuracyResult{Scenario: a.settings.Scenario.String(), SUTName: a.sut.Name()}
	sutCtx, sutCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer sutCancel()
	start := a.clock.Now()
	seq := 0
	for si, set := range a.sets {
		if err := a.qsl.Load(ctx, set.Loaded[:set.End]); err != nil {
			return nil, fmt.Errorf("loading accuracy set %d: %w", si, err)
		}
		res.Sets++
		setStart := a.clock.Now()
		stop := a.issueSet(ctx, sutCtx, set, &seq)
		res.Spans = append(res.Spans, AccuracySpan{Start: setStart, End: a.clock.Now()})
		if stop != "" {
			res.Stalled = stop == StopStalled
			res.Cancelled = stop == StopCancelled
			break
		}
	}
	a.mu.Lock()
	a.closed = true
	res.QueriesIssued = len(a.qsls)
	res.SamplesIssued = a.issued
	res.SamplesCompleted = a.done
	res.SamplesFailed = a.failed + (a.issued - a.done - a.failed)
	res.Entries = a.entries
	res.Errors = a.errs
	a.mu.Unlock()
	if un := res.SamplesIssued - res.SamplesCompleted - a.failed; un > 0 {
		res.Errors = append(res.Errors, fmt.Sprintf("%d samples got no response", un))
	}
	res.DurationNs = int64(a.clock.Now().Sub(start))
	return res, nil
}

// issueSet issues one set's queries by scenario and waits for them all.
// Every wait is bounded by the drain timeout from the moment issuing
// stopped (after each query in the closed loops, after the set's last
// query otherwise), as a performance run's drain is.
func (a *AccuracyRun) issueSet(ctx, sutCtx context.Context, set AccuracySet, seq *int) StopReason {
	t0 := a.clock.Now()
	done := ctx.Done()
	drain := time.Duration(a.settings.Engine.DrainTimeoutMs) * time.Millisecond
	for i, samples := range set.Queries {
		if set.Scheduled != nil {
			a.clock.SleepUntil(ctx, t0.Add(set.Scheduled[i]))
		}
		if cancelled(done) {
			return StopCancelled
		}
		a.mu.Lock()
		id, first := len(a.qsls), *seq
		a.qsls = append(a.qsls, samples)
		a.firsts = append(a.firsts, first)
		for range samples {
			a.got = append(a.got, false)
		}
		a.issued += int64(len(samples))
		target := a.issued
		a.mu.Unlock()
		*seq += len(samples)
		now := a.clock.Now()
		sched := now
		if set.Scheduled != nil {
			sched = t0.Add(set.Scheduled[i])
		}
		a.sut.IssueQuery(sutCtx, Query{ID: id, FirstSample: first, Samples: samples, Scheduled: sched, Issued: now}, a.complete)
		if set.Scheduled == nil && a.settings.Scenario != trace.Offline {
			if stop := a.wait(ctx, target, time.Now().Add(drain)); stop != "" {
				return stop
			}
		}
	}
	a.mu.Lock()
	target := a.issued
	a.mu.Unlock()
	return a.wait(ctx, target, time.Now().Add(drain))
}

// wait returns once target samples have answered (or failed), StopCancelled
// when ctx ends, StopStalled when the deadline passes first. The deadline
// is a total bound, not one on the silence between answers: a SUT far over
// capacity answers now and then for as long as its backlog lasts. It uses
// the real clock: it bounds waiting, it measures nothing.
func (a *AccuracyRun) wait(ctx context.Context, target int64, deadline time.Time) StopReason {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		a.mu.Lock()
		n := a.done + a.failed
		a.mu.Unlock()
		if n >= target {
			return ""
		}
		select {
		case <-a.progress:
		case <-timer.C:
			return StopStalled
		case <-ctx.Done():
			return StopCancelled
		}
	}
}

// complete records a completion: the done callback of every query.
func (a *AccuracyRun) complete(c Completion) {
	a.mu.Lock()
	defer func() {
		a.mu.Unlock()
		select {
		case a.progress <- struct{}{}:
		default:
		}
	}()
	if a.closed {
		return
	}
	if c.Query < 0 || c.Query >= len(a.qsls) || c.Count <= 0 || c.First < 0 || c.First+c.Count > len(a.qsls[c.Query]) {
		a.note(fmt.Sprintf("protocol: completion of query %d samples [%d, %d+%d) does not match an issued query", c.Query, c.First, c.First, c.Count))
		return
	}
	err := c.Err
	if err == nil && len(c.Data) != c.Count {
		err = fmt.Errorf("%w (%d responses for %d samples)", ErrAccuracyCapture, len(c.Data), c.Count)
	}
	samples := a.qsls[c.Query]
	base := a.firsts[c.Query]
	for j := c.First; j < c.First+c.Count; j++ {
		seq := base + j
		if a.got[seq] {
			a.note(fmt.Sprintf("protocol: sample %d of query %d completed twice", j, c.Query))
			continue
		}
		a.got[seq] = true
		if err != nil {
			a.failed++
			continue
		}
		a.done++
		a.entries = append(a.entries, entryOf(seq, samples[j], &c, j))
	}
	if err != nil {
		a.note(fmt.Sprintf("query %d samples [%d, %d): %v", c.Query, c.First, c.First+c.Count, err))
	}
}

func (a *AccuracyRun) note(msg string) {
	if len(a.errs) < max(a.settings.Engine.MaxErrorMessages, 1) {
		if a.scrub != nil {
			msg = a.scrub(msg)
		}
		a.errs = append(a.errs, msg)
	}
}

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// ErrBadRecord is what MergeIssued and MergeSample refuse a record with: a
// worker of another trace, a repeated or out-of-order record, a value out of
// range. The run is unchanged by a refused record.
var ErrBadRecord = errors.New("loadgen: bad worker record")

// QSLCounts is a sample library's counts: all of the QSL that a merged run
// needs (the workers load the samples; the coordinator only generates the
// trace). It is a QSL whose Load does nothing.
type QSLCounts struct {
	Total, Performance int
}

// TotalSampleCount returns Total.
func (q QSLCounts) TotalSampleCount() int { return q.Total }

// PerformanceSampleCount returns Performance.
func (q QSLCounts) PerformanceSampleCount() int { return q.Performance }

// Load does nothing: a merged run's samples are loaded by its workers.
func (QSLCounts) Load(context.Context, []int) error { return nil }

// mergedSUT stands where a merged run's SUT would: a merged run is never
// executed (NewMergedRun marks it started), so nothing issues through it.
type mergedSUT struct{ name string }

func (s mergedSUT) Name() string                                      { return s.name }
func (mergedSUT) IssueQuery(context.Context, Query, func(Completion)) {}

// mergeState is what a merged run adds to a Run: one record at a time,
// and the end. The shards' progress is the run's issuers' (one per shard,
// none of which issues).
type mergeState struct {
	mu         sync.Mutex // the coordinator's workers' records arrive concurrently
	splitSeen  []bool     // Offline split between shards: the shards that reported its query
	unanswered []uint64   // bit per sample: a worker reported it unanswered at its drain's end
	finished   *Result
	names      []string // the workers of the shards (NameWorkers), for the per-sample export
	// liveStart is the run's start on the coordinator's clock
	// (MergedStarted), for Progress: the record's own start is fixed.
	liveStart atomic.Pointer[time.Time]
}

// MergedStarted tells a merged run when its workers start, on the clock
// its Progress reads (the wall clock by default): until then its Progress
// says not started, and from then on its elapsed time counts from t. The
// record does not depend on it.
func (r *Run) MergedStarted(t time.Time) {
	if m := r.merge; m != nil {
		m.liveStart.Store(&t)
	}
}

// NewMergedRun is the run N workers carried out, rebuilt from their records:
// the same trace, record and per-shard issue logs as one run with
// Engine.Issuers N, so its Result and every file pkg/runlog.Write writes are
// what one host's run would have given. Feed it with MergeIssued and
// MergeSample as the workers' chunks arrive, in any interleaving of the
// shards, then FinishMerged. It is never executed.
//
// Server, Offline and closed-loop concurrency runs can be sharded;
// SingleStream and MultiStream are one sequence of queries (shards 1
// only), and v0.5 MultiStream's tick accounting is not in the records.
func NewMergedRun(s Settings, qsl QSLCounts, shards int, opts ...Option) (*Run, error) {
	if shards < 1 {
		return nil, fmt.Errorf("%w: workers: %d shards; a run has at least 1", trace.ErrInvalidSettings, shards)
	}
	if err := mergeable(s, shards); err != nil {
		return nil, fmt.Errorf("%w: workers: %w", trace.ErrInvalidSettings, err)
	}
	var stand []SUT // the in-process issuers' SUTs NewRun asks for; never used
	for range max(s.Engine.Issuers, 1) - 1 {
		stand = append(stand, mergedSUT{})
	}
	r, err := NewRun(s, mergedSUT{name: "merged"}, qsl, append(opts, WithIssuerSUTs(stand...))...)
	if err != nil {
		return nil, err
	}
	if r.interval > 0 {
		return nil, fmt.Errorf("%w: workers: v0.5 MultiStream's ticks are not in a worker's records", trace.ErrInvalidSettings)
	}
	// One issuer per shard, as a run of Engine.Issuers N has: the shards'
	// progress, cursors and counters live where a local run keeps them.
	r.shardN, r.iss, r.byShard = shards, nil, make([]*issuer, shards)
	for k := range shards {
		is := &issuer{r: r, k: k, sut: mergedSUT{}, notify: make(chan struct{}, 1)}
		r.iss, r.byShard[k] = append(r.iss, is), is
	}
	r.split = s.Scenario == trace.Offline && shards > 1
	r.startIssuers()
	r.times = newShardLogs(shards)
	r.merge = &mergeState{splitSeen: make([]bool, shards)}
	if s.Scenario == trace.Offline {
		for seq := range r.n * r.spq {
			_ = r.samples.Start(seq, 0) // as Execute does: in flight from the start
		}
		r.preStarted = true
	}
	r.classify = mergedClassifier(r.classify)
	// The run's clock is the records': any start will do, and it is fixed,
	// so that a merged run depends on nothing but its records.
	r.startTime = time.Unix(0, 0)
	r.startedAt.Store(&r.startTime)
	r.started.Store(true) // Execute would issue through nothing: ErrAlreadyExecuted
	return r, nil
}

// NameWorkers names the workers of a merged run's shards, names[k] shard
// k's: its per-sample export (WriteSamples) gives each sample's line the
// worker that issued it ("worker"). Call it before WriteSamples.
func (r *Run) NameWorkers(names []string) error {
	m := r.merge
	switch {
	case m == nil:
		return fmt.Errorf("%w: not a merged run (NewMergedRun)", ErrBadRecord)
	case len(names) != r.shardN:
		return fmt.Errorf("%w: %d worker names for %d shards", ErrBadRecord, len(names), r.shardN)
	}
	m.mu.Lock()
	m.names = slices.Clone(names)
	m.mu.Unlock()
	return nil
}

// workerOf is the name of the worker that issued sample seq of a merged
// run named by NameWorkers; ok false otherwise.
func (r *Run) workerOf(seq int) (string, bool) {
	m := r.merge
	if m == nil || len(m.names) != r.shardN {
		return "", false
	}
	if r.split {
		return m.names[seq%r.shardN], true
	}
	return m.names[(seq/r.spq)%r.shardN], true
}

// mergedClassifier classifies a worker's failed sample by the kind its
// record carries, anything else by user's classifier.
func mergedClassifier(user FailureClassifier) FailureClassifier {
	if user == nil {
		user = defaultClassifier
	}
	return func(err error) (string, string) {
		if f, ok := errors.AsType[*recordFailure](err); ok {
			return f.outcome, f.status
		}
		return user(err)
	}
}

// mergeable says why settings s cannot be split into shards, if they cannot.
func mergeable(s Settings, shards int) error {
	switch {
	case shards == 1, s.Engine.Concurrency > 0, s.Scenario == trace.Server, s.Scenario == trace.Offline:
		return nil
	}
	return fmt.Errorf("%s is one sequence of queries, each issued when the previous one is answered: %d workers cannot share it", s.Scenario, shards)
}

// MergeIssued merges shard's issue of query q, scheduled at scheduledNs and
// issued at issuedNs (ns since the run's start on the worker's clock, moved
// by its measured offset). A shard's queries are shard, shard+N, shard+2N …
// in that order, each once (Offline split between shards: query 0, once
// by every shard); in a Server run the scheduled time must be the trace's
// (a worker of another trace is refused).
func (r *Run) MergeIssued(shard, q int, scheduledNs, issuedNs int64) error {
	m := r.merge
	if m == nil {
		return fmt.Errorf("%w: not a merged run (NewMergedRun)", ErrBadRecord)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.finished != nil:
		return fmt.Errorf("%w: shard %d query %d: the run has finished", ErrBadRecord, shard, q)
	case shard < 0 || shard >= r.shardN:
		return fmt.Errorf("%w: shard %d: the run has shards 0 to %d", ErrBadRecord, shard, r.shardN-1)
	case scheduledNs < 0 || issuedNs < 0 || issuedNs > maxMergedNs:
		return fmt.Errorf("%w: shard %d query %d: scheduled %d ns, issued %d ns: out of range", ErrBadRecord, shard, q, scheduledNs, issuedNs)
	case r.split:
		return r.mergeSplit(shard, q, scheduledNs, issuedNs)
	}
	is := r.byShard[shard]
	want := shard + int(is.issuedQ.Load())*r.shardN
	switch {
	case q != want:
		return fmt.Errorf("%w: shard %d: query %d, want %d (a shard's queries come once each, in trace order)", ErrBadRecord, shard, q, want)
	case q >= r.n:
		return fmt.Errorf("%w: shard %d: query %d is past the trace's %d queries", ErrBadRecord, shard, q, r.n)
	}
	tq, _ := is.next()
	if r.settings.Scenario == trace.Server && scheduledNs != int64(tq.Scheduled) {
		// The cursor has passed q; the shard's next record must be q again
		// (a caller drops a worker at its first refused record, so this
		// walk from the start is rare).
		is.cur.Reset()
		for k := 0; k <= want-r.shardN; k++ {
			is.cur.Next()
		}
		return fmt.Errorf("%w: shard %d query %d: scheduled at %d ns, the trace has %d ns (a worker of another trace?)", ErrBadRecord, shard, q, scheduledNs, int64(tq.Scheduled))
	}
	is.noteIssued(tq, scheduledNs, issuedNs)
	return nil
}

// mergeSplit merges shard's report of Offline's one query, split between
// the shards: the first report issues it (at its issue time), each shard's
// puts its share in flight.
func (r *Run) mergeSplit(shard, q int, scheduledNs, issuedNs int64) error {
	m := r.merge
	switch {
	case q != 0 || scheduledNs != 0:
		return fmt.Errorf("%w: shard %d: query %d scheduled at %d ns; Offline's one query is 0, due at 0", ErrBadRecord, shard, q, scheduledNs)
	case m.splitSeen[shard]:
		return fmt.Errorf("%w: shard %d: query 0 again (a shard issues it once)", ErrBadRecord, shard)
	}
	if !slices.Contains(m.splitSeen, true) {
		r.noteSplit(issuedNs) // the first report issues it
	}
	m.splitSeen[shard] = true
	r.byShard[shard].issuedS = int64(len(r.byShard[shard].share))
	return nil
}

// recordFailure is a worker's failed sample, as its kind: the merged run's
// classifier reads it back (failures by kind count what the workers'
// classifiers said).
type recordFailure struct{ kind, outcome, status string }

func (f *recordFailure) Error() string { return f.kind }

func newRecordFailure(kind string) *recordFailure {
	o, st, _ := strings.Cut(kind, " ")
	if o == "" {
		o = OverflowOutcome
	}
	return &recordFailure{kind: kind, outcome: o, status: st}
}

// MergeSample merges one sample's outcome: its sequence number in range,
// its query merged as issued by its shard, the sample not yet recorded. It
// goes through the bookkeeping a local completion does. A sample a worker
// reports unanswered at its drain's end (Kind "unanswered") stays in flight
// until FinishMerged fails it, as a local run's drain end does (counted
// apart, not by the second it failed in).
func (r *Run) MergeSample(s SampleRecord) error {
	m := r.merge
	if m == nil {
		return fmt.Errorf("%w: not a merged run (NewMergedRun)", ErrBadRecord)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sched, err := r.checkSample(s)
	if err != nil {
		return err
	}
	c := Completion{Query: s.Seq / r.spq, First: s.Seq % r.spq, Count: 1, Tokens: int(s.Tokens), InputTokens: int(s.InputTokens),
		TokensFromServer: s.TokensFromServer}
	if s.Tokens > 0 || s.InputTokens > 0 {
		c.FirstToken = r.startTime.Add(time.Duration(sched + s.FirstTokenNs))
	}
	if s.Failed && s.Kind == unansweredKind {
		m.markUnanswered(s.Seq, r.n*r.spq)
		if c.Tokens > 0 || c.InputTokens > 0 {
			r.keepMeasured(&c, s.Seq, s.Seq+1, sched+s.LatencyNs, sched)
		}
		return nil
	}
	if s.Failed {
		c.Err = newRecordFailure(s.Kind)
	}
	shard := c.Query % r.shardN
	if r.split {
		shard = s.Seq % r.shardN
	}
	r.record(c, sched+s.LatencyNs, r.byShard[shard])
	if s.Tokens > 0 && !s.Failed {
		// A record carries no inter-token gaps (recordTokens took it for a
		// burst): the worker said whether it was one.
		r.tokenRec().burst[s.Seq] = s.Burst && s.Tokens >= 2
	}
	return nil
}

// unansweredKind is the kind of a sample a worker's drain end failed.
const unansweredKind = "unanswered"

// checkSample refuses a record MergeSample cannot take; it returns the
// sample's scheduled time.
func (r *Run) checkSample(s SampleRecord) (sched int64, err error) {
	m := r.merge
	bad := func(format string, a ...any) (int64, error) {
		return 0, fmt.Errorf("%w: sample %d: "+format, append([]any{ErrBadRecord, s.Seq}, a...)...)
	}
	if m.finished != nil {
		return bad("the run has finished")
	}
	if s.Seq < 0 || s.Seq >= r.n*r.spq {
		return bad("seq is outside the trace's %d samples", r.n*r.spq)
	}
	q := s.Seq / r.spq
	if !r.isIssued(q) || (r.split && !m.splitSeen[s.Seq%r.shardN]) {
		return bad("its query %d was not issued by its shard (the issue record comes first)", q)
	}
	sched, inFlight := r.samples.InFlightScheduled(s.Seq)
	switch {
	case !inFlight || m.isUnanswered(s.Seq):
		return bad("recorded already")
	case s.LatencyNs < 0 || s.LatencyNs > maxMergedNs-sched:
		return bad("latency_ns %d is out of range", s.LatencyNs)
	case s.Tokens < 0 || s.InputTokens < 0:
		return bad("tokens %d, input tokens %d: negative", s.Tokens, s.InputTokens)
	case s.FirstTokenNs < 0 || s.FirstTokenNs > maxMergedNs-sched:
		return bad("first_token_ns %d is out of range", s.FirstTokenNs)
	}
	return sched, nil
}

func (m *mergeState) markUnanswered(seq, n int) {
	if m.unanswered == nil {
		m.unanswered = make([]uint64, (n+63)/64) // a bit a sample, made at the first
	}
	m.unanswered[seq/64] |= 1 << (seq % 64)
}

func (m *mergeState) isUnanswered(seq int) bool {
	return m.unanswered != nil && m.unanswered[seq/64]&(1<<(seq%64)) != 0
}

// maxMergedNs bounds a record's times (ns since the start): about 104
// days, past any run, and far from int64's overflow.
const maxMergedNs = 1 << 63 / 1024

// StopWorkerLost ends a merged run one of whose workers was lost.
const StopWorkerLost StopReason = "worker_lost"

// LostWorker is a worker a merged run lost: its records stopped coming.
type LostWorker struct {
	Name  string
	Shard int
	AtNs  int64 // when it was found lost, ns since the run's start
}

// MergedEnd is how a merged run ended, as its coordinator saw it and its
// workers reported.
type MergedEnd struct {
	// Reason is why issuing stopped: the workers' (they stop for the same
	// reasons, on the same trace), or the coordinator's (a cancel).
	// A lost worker makes it StopWorkerLost whatever it says.
	Reason        StopReason
	DrainTimedOut bool
	SUTName       string
	Wall          time.Time // the run's start on the wall clock: result.json's start_time
	DurationNs    int64     // from the start to the end of the drain
	// StreamingAtDrain is the workers' answers still streaming when their
	// drain ended (StreamingSUT), summed.
	StreamingAtDrain int64
	Resent           int64 // requests the workers' clients sent again, summed
	// InterTokenGaps are the workers' inter-token gaps (Run.InterTokenGaps),
	// merged bucket by bucket: the records carry no gap.
	InterTokenGaps []stats.Bucket
	// MaxOutstanding is a closed loop's most queries outstanding: the
	// workers' maxima summed (with several, an upper bound: their peaks
	// need not coincide).
	MaxOutstanding int64

	// Messages are the workers' failure messages, in shard order: those of
	// their completions, not a worker's own count of unanswered samples
	// (the merged run counts those itself).
	Messages []string
	// Examples are the workers' failure kinds: each kind's Example replaces
	// the merged run's (the records carry a kind, not its text). Their
	// counts are not used: the records count.
	Examples []Failure

	Lost []LostWorker // workers lost mid-run: the run is INVALID
}

// FinishMerged ends the merged run: every issued sample no record answered
// fails unanswered (as at a local run's drain end), and the result is
// judged as a local run's is. A lost worker makes it INVALID with "worker W
// lost at T s: N samples unaccounted", N its issued samples no record
// answered. A second call returns the first's result; records after it are
// refused.
func (r *Run) FinishMerged(end MergedEnd) *Result {
	m := r.merge
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.finished != nil {
		return m.finished
	}
	lost := make([]string, 0, len(end.Lost))
	for _, w := range end.Lost {
		lost = append(lost, fmt.Sprintf("worker %s lost at %.1f s: %d samples unaccounted", w.Name, float64(w.AtNs)/1e9, r.unaccounted(w.Shard)))
	}
	r.sutName, r.streamingAtDrain = end.SUTName, end.StreamingAtDrain
	r.maxOutstanding.Store(end.MaxOutstanding)
	if t := r.tok.Load(); t != nil {
		t.itl.AddBuckets(end.InterTokenGaps)
	}
	r.errMu.Lock()
	r.errs = r.errs[:0]
	for _, m := range end.Messages[:min(len(end.Messages), r.settings.Engine.MaxErrorMessages)] {
		r.errs = append(r.errs, r.scrubbed(m)) // a worker's text, kept as a local run keeps its own
	}
	r.errMu.Unlock()
	unanswered := r.close()
	r.finished.Store(true)
	reason := end.Reason
	if len(lost) > 0 {
		reason = StopWorkerLost
	}
	r.takeExamples(end.Examples)
	res := r.result(reason, end.DrainTimedOut, unanswered, end.Wall, r.startTime.Add(time.Duration(end.DurationNs)))
	res.Tokens = r.tokenResult(res)
	r.shapedResult(res)
	res.RequestsResent = end.Resent
	if o, ok := r.obs.(ResendObserver); ok {
		o.Resent(uint64(res.RequestsResent))
	}
	if len(lost) > 0 {
		res.EndMessage = "Ending early: " + strings.Join(lost, "; ") + "."
		res.Valid, res.Validity = false, "INVALID"
		res.InvalidReasons = append(lost, res.InvalidReasons...)
		recs := make([]string, len(lost))
		for i := range recs {
			recs[i] = recWorkerLost
		}
		res.Recommendations = append(recs, res.Recommendations...)
	}
	m.finished = res
	return res
}

const recWorkerLost = "a worker was lost mid-run: see its logs and its node's (killed, evicted, partitioned?), then run again"

// unaccounted counts shard's issued samples that no record accounted for:
// neither answered nor reported unanswered.
func (r *Run) unaccounted(shard int) int64 {
	m := r.merge
	if shard < 0 || shard >= r.shardN {
		return 0
	}
	var n int64
	count := func(seq int) {
		if _, inFlight := r.samples.InFlightScheduled(seq); inFlight && !m.isUnanswered(seq) {
			n++
		}
	}
	if r.split {
		if m.splitSeen[shard] {
			for seq := shard; seq < r.spq; seq += r.shardN {
				count(seq)
			}
		}
		return n
	}
	for i := range int(r.byShard[shard].issuedQ.Load()) {
		q := shard + i*r.shardN
		for seq := q * r.spq; seq < (q+1)*r.spq; seq++ {
			count(seq)
		}
	}
	return n
}

// takeExamples gives each failure kind the first worker's example of it.
func (r *Run) takeExamples(ex []Failure) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	for i := range r.failures.kinds {
		k := &r.failures.kinds[i]
		for _, e := range ex {
			if e.Outcome == k.Outcome && e.Status == k.Status && e.Example != "" {
				k.Example = clip(r.scrubbed(e.Example))
				break
			}
		}
	}
}

// InterTokenGaps returns the inter-token gaps of a generative run's
// answered samples, as histogram buckets (nil for a run without tokens):
// what a worker reports at its end for its coordinator's merged run.
// Read it after Execute has returned.
func (r *Run) InterTokenGaps() []stats.Bucket {
	if t := r.tok.Load(); t != nil {
		return t.itl.Buckets()
	}
	return nil
}

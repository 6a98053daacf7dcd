package loadgen

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// ErrStartPassed is returned by Execute when the start WithStartAt asked
// for had already passed once the run was ready to issue: a worker of a
// distributed run must not start late silently, its shard would be shifted
// against the others'.
var ErrStartPassed = errors.New("loadgen: the start time had passed when the run was ready")

// WithShard makes the run issue shard k of n of the trace, as in-process
// issuer k of n does (Engine.Issuers): the queries i with i mod n = k
// (Offline: the samples with sequence number mod n = k of its one query);
// the other shards are issued elsewhere (the other workers of a
// distributed run). Its Result counts its own shard only (Result.Shard),
// and its verdict is not the run's: the run is judged on the merged record
// of every shard. A shard has one issuer: Engine.Issuers > 1 is refused.
func WithShard(k, n int) Option {
	return func(r *Run) { r.shardK, r.shardN, r.shardSet = k, n, true }
}

// WithStartAt makes the run start at t on the run's clock (a distributed
// run's common start, translated to this worker's clock) instead of as soon
// as it is ready: the untimed part (the QSL load, the warm-up) comes first,
// then the issuer waits until t, and every scheduled time is t plus the
// query's offset. If t has passed by then, Execute fails with
// ErrStartPassed, saying by how much.
func WithStartAt(t time.Time) Option { return func(r *Run) { r.startAt = t } }

// WithStartGate is WithStartAt with a start learned once the run is ready:
// after the untimed part, the run calls gate, and starts at the time it
// returns (on the run's clock). A distributed run's worker reports itself
// ready there, and waits for the common start its coordinator picks once
// every worker is ready, so no worker's setup can outlast a start fixed
// before it. An error from gate fails Execute with it; nothing timed was
// issued.
func WithStartGate(gate func(ctx context.Context) (time.Time, error)) Option {
	return func(r *Run) { r.startGate = gate }
}

// Shard is a Result's shard of a distributed run (WithShard).
type Shard struct {
	// Index is the shard k, Of the number n of shards: the run issued the
	// queries i with i mod n = k.
	Index int `json:"index"`
	Of    int `json:"of"`
}

// checkShard: a shard is one of n ≥ 1 and has one issuer.
func (r *Run) checkShard() error {
	if !r.shardSet {
		return nil
	}
	if r.shardN < 1 || r.shardK < 0 || r.shardK >= r.shardN {
		return fmt.Errorf("shard: %d of %d is not a shard; want 0 ≤ k < n", r.shardK, r.shardN)
	}
	if n := r.settings.Engine.Issuers; n > 1 {
		return fmt.Errorf("issuers: a shard of a distributed run (WithShard) has one issuer, got %d; set issuers to 1", n)
	}
	return nil
}

// waitForStart calls the WithBeforeStart function, then waits until the
// start WithStartAt set, or fails if it has passed. A cancel during the
// wait starts the run at once: its issuers stop at their first check, and
// the result says cancelled.
func (r *Run) waitForStart(ctx context.Context) error {
	for _, f := range r.beforeStart { // WithBeforeStart: before the wait, whatever it is
		f(ctx)
	}
	if r.startGate != nil {
		t, err := r.startGate(ctx)
		if err != nil {
			return fmt.Errorf("waiting for the start: %w", err)
		}
		r.startAt = t
	}
	if r.startAt.IsZero() {
		return nil
	}
	if late := r.clock.Now().Sub(r.startAt); late > 0 {
		return fmt.Errorf("%w: by %v (the start was %s on this clock)", ErrStartPassed, late, r.startAt.Format(time.RFC3339Nano))
	}
	r.sleepUntilStart(ctx)
	return nil
}

// startSpin is how long before the common start the wait for it stops
// sleeping and spins: a timer's wake-up, and the scheduler's after it, can
// be late by a millisecond on a busy host, and the first query, due at the
// start itself, would carry that lateness (the later ones are waited for
// by the issuer, which starts on time). Once a run.
const startSpin = time.Millisecond

// sleepUntilStart sleeps until spin (startSpin; the benchmark's baseline
// sets none) before the start, then, on the system clock, yields until it
// (another clock, a test's, sleeps to it).
func (r *Run) sleepUntilStart(ctx context.Context) {
	sc, ok := r.clock.(*SystemClock)
	if !ok {
		r.clock.SleepUntil(ctx, r.startAt)
		return
	}
	sc.SleepUntil(ctx, r.startAt.Add(-r.startSpin))
	for time.Until(r.startAt) > 0 && ctx.Err() == nil {
		runtime.Gosched()
	}
}

// RecordSink receives the run's record as it is made: a worker of a
// distributed run streams it to its coordinator, which merges the shards
// into one record. A run without one pays a nil check per issue and per
// completion; with one, nothing is allocated per call.
type RecordSink interface {
	// QueryIssued: on the issuing goroutine, in the shard's issue order:
	// query q (trace index) was due at scheduledNs and handed to the SUT
	// at issuedNs, ns since the run's start. Offline's one query is
	// reported by every shard, as q 0.
	QueryIssued(shard, q int, scheduledNs, issuedNs int64)
	// SampleDone: from any goroutine, exactly once per issued sample
	// (answered, failed, or unanswered at the drain's end, as failed).
	SampleDone(s SampleRecord)
}

// SampleRecord is one sample's entry in the record.
type SampleRecord struct {
	Seq       int   // sample sequence number (Query.Sample(j))
	LatencyNs int64 // from its query's scheduled time; of a failed sample, when it failed (0: unanswered)
	Failed    bool
	// Kind is a failure's kind: the FailureClassifier's outcome, then, when
	// the server answered with one, a space and the status ("timeout",
	// "error HTTP 503"; outcomes have no spaces), so that a merged run
	// counts failures by the kinds a local run does. "" on success.
	Kind string
	// A generative sample's token measurements (zero otherwise), as the
	// run's token record keeps them: the first token-bearing response,
	// ns after the query's scheduled time, the output tokens and the
	// prompt's tokens.
	FirstTokenNs int64
	Tokens       int32
	InputTokens  int32
	// TokensFromServer: Tokens is the server's count, not the responses'.
	// Burst: an answered sample of two tokens or more whose token-bearing
	// responses all arrived at one instant (its E2E − TTFT measures no
	// decoding). A merged run needs both to judge as a local one does.
	TokensFromServer, Burst bool
}

// WithRecordSink makes the run report its record to s as it is made.
func WithRecordSink(s RecordSink) Option { return func(r *Run) { r.sink = s } }

// sampleRecord is the sink's record of completion c's samples (all alike
// but for Seq), lat their latency, off and sched the completion's and
// their query's offsets. A failure's kind is classified here as well as in
// noteFailure: failures only, and only with a sink.
func (r *Run) sampleRecord(c *Completion, lat time.Duration, off, sched int64) SampleRecord {
	rec := SampleRecord{LatencyNs: int64(lat)}
	if c.Err != nil {
		classify := r.classify
		if classify == nil {
			classify = defaultClassifier
		}
		rec.Failed = true
		rec.Kind = failureKind(classify(c.Err))
	}
	if c.Tokens > 0 || c.InputTokens > 0 {
		rec.FirstTokenNs = r.firstTokenAt(c, off, sched) - sched
		rec.Tokens, rec.InputTokens = clampTokens(c.Tokens), clampTokens(c.InputTokens)
		rec.TokensFromServer = c.TokensFromServer
		rec.Burst = c.Err == nil && rec.Tokens >= 2 && together(c.Gaps)
	}
	return rec
}

// failureKind is SampleRecord.Kind of a failure classified as outcome and
// status.
func failureKind(outcome, status string) string {
	if status == "" {
		return outcome
	}
	return outcome + " " + status
}

// sinkUnanswered tells the sink that sample seq got no answer by the
// drain's end, with what its token record measured of it.
func (r *Run) sinkUnanswered(seq int) {
	if r.sink == nil {
		return
	}
	rec := SampleRecord{Seq: seq, Failed: true, Kind: "unanswered"} // as the token record names it
	if t := r.tok.Load(); t != nil {
		rec.FirstTokenNs, rec.Tokens, rec.InputTokens = t.first[seq], t.tokens[seq], t.input[seq]
	}
	r.sink.SampleDone(rec)
}

// StreamingAtDrain is how many answers were still streaming (tokens had
// come, their end had not) when the drain ended (StreamingSUT). Read it
// after Execute.
func (r *Run) StreamingAtDrain() int64 { return r.streamingAtDrain }

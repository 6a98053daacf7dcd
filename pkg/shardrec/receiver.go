package shardrec

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/recordwire"
	"github.com/netloadgen/netloadgen/pkg/stats"
)

// ErrChunk is what Receive refuses a chunk with: it does not decode, it is
// not this run's or this worker's, a chunk before it is missing, or a record
// in it is one the merged run refuses. The worker's later chunks are refused
// too (ErrWorkerRefused): its records can no longer be trusted to be whole,
// and the coordinator ends the run with the worker lost.
var ErrChunk = errors.New("shardrec: chunk refused")

// ErrWorkerRefused: a chunk of a worker one of whose chunks was refused.
var ErrWorkerRefused = errors.New("shardrec: the worker's records were refused")

// Receiver is the coordinator's side: it applies each worker's chunks, in
// order, to the merged run (loadgen.NewMergedRun), shard k being worker k's.
// Safe for concurrent use: the workers' chunks arrive on their own requests.
type Receiver struct {
	run   *loadgen.Run
	runID string
	lim   recordwire.Limits

	mu      sync.Mutex
	shards  []shardState
	scratch recordwire.Chunk // decoded into under mu: its arrays reused chunk after chunk
}

type shardState struct {
	worker  string
	next    uint64 // the sequence number of its next chunk
	ended   bool   // its last chunk (with its end) arrived
	refused error  // why its records were refused; nil: none was
	end     recordwire.End
}

// NewReceiver returns the receiver of run's chunks: workers[k] is the name
// of the worker of shard k (as many as the run's shards).
func NewReceiver(run *loadgen.Run, runID string, workers []string, lim recordwire.Limits) *Receiver {
	r := &Receiver{run: run, runID: runID, lim: lim, shards: make([]shardState, len(workers))}
	for k, w := range workers {
		r.shards[k].worker = w
	}
	return r
}

// Receive applies one chunk. A chunk already applied (a resend whose first
// answer was lost) is acknowledged and not applied again: dup is true. An
// error wraps ErrChunk (or ErrWorkerRefused) and names the worker, the chunk
// and what is wrong; the records of the chunk before the bad one stay
// merged.
func (r *Receiver) Receive(b []byte) (dup bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := &r.scratch
	if err := recordwire.DecodeInto(c, b, r.lim); err != nil {
		return false, fmt.Errorf("%w: %w", ErrChunk, err)
	}
	st, err := r.shardOf(c)
	if err != nil {
		return false, err
	}
	switch {
	case st.refused != nil:
		return false, fmt.Errorf("%w: worker %s: chunk %d: %w", ErrWorkerRefused, st.worker, c.Seq, st.refused)
	case c.Seq < st.next:
		return true, nil
	case c.Seq > st.next:
		return false, st.refuse(fmt.Errorf("%w: worker %s: chunk %d arrived, %d expected: a chunk was lost", ErrChunk, st.worker, c.Seq, st.next))
	case st.ended:
		return false, st.refuse(fmt.Errorf("%w: worker %s: chunk %d after its last chunk", ErrChunk, st.worker, c.Seq))
	}
	if err := r.apply(c); err != nil {
		return false, st.refuse(fmt.Errorf("%w: worker %s: chunk %d: %w", ErrChunk, st.worker, c.Seq, err))
	}
	st.next++
	if c.End != nil {
		st.ended, st.end = true, *c.End // c.End is the decoder's own, not reused
	}
	return false, nil
}

// shardOf is the state of c's shard, c's header checked against it.
func (r *Receiver) shardOf(c *recordwire.Chunk) (*shardState, error) {
	switch {
	case c.Shards != len(r.shards):
		return nil, fmt.Errorf("%w: worker %q: shards %d, the run has %d", ErrChunk, c.Worker, c.Shards, len(r.shards))
	case c.RunID != r.runID:
		return nil, fmt.Errorf("%w: worker %q: run id %q, this run is %q", ErrChunk, c.Worker, c.RunID, r.runID)
	}
	st := &r.shards[c.Shard] // Decode checked 0 ≤ shard < shards
	if c.Worker != st.worker {
		return nil, fmt.Errorf("%w: worker %q: shard %d is worker %s's", ErrChunk, c.Worker, c.Shard, st.worker)
	}
	return st, nil
}

func (st *shardState) refuse(err error) error {
	st.refused = err
	return err
}

// apply merges c's records, the issues first: a chunk's samples may
// belong to its queries.
func (r *Receiver) apply(c *recordwire.Chunk) error {
	for i, is := range c.Issues {
		if is.Query < 0 || is.Query > int64(maxInt) {
			return fmt.Errorf("issue %d: query %d out of range", i, is.Query)
		}
		if err := r.run.MergeIssued(c.Shard, int(is.Query), is.ScheduledNs, is.IssuedNs); err != nil {
			return fmt.Errorf("issue %d: %w", i, err)
		}
	}
	for i := range c.Samples {
		s := &c.Samples[i]
		if s.Seq < 0 || s.Seq > int64(maxInt) || s.OutputTokens > maxInt32 || s.InputTokens > maxInt32 {
			return fmt.Errorf("sample %d: seq %d, tokens %d, input tokens %d: out of range", i, s.Seq, s.OutputTokens, s.InputTokens)
		}
		rec := loadgen.SampleRecord{Seq: int(s.Seq), LatencyNs: s.LatencyNs, Failed: s.Failed, Kind: s.Kind,
			FirstTokenNs: s.FirstTokenNs, Tokens: int32(s.OutputTokens), InputTokens: int32(s.InputTokens),
			TokensFromServer: s.TokensFromServer, Burst: s.Burst}
		if err := r.run.MergeSample(rec); err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
	}
	return nil
}

const (
	maxInt   = int(^uint(0) >> 1)
	maxInt32 = 1<<31 - 1
)

// Ended reports whether every worker's last chunk has arrived.
func (r *Receiver) Ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.shards {
		if !st.ended {
			return false
		}
	}
	return true
}

// End completes base, the coordinator's account of how the run ended, with
// what the workers' last chunks reported: their failure messages (in shard
// order) and kinds' examples, resends, answers streaming at the drain,
// closed-loop peaks and inter-token gaps, summed. A worker whose end never came reports nothing.
func (r *Receiver) End(base loadgen.MergedEnd) loadgen.MergedEnd {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.shards {
		if !st.ended {
			continue
		}
		e := &st.end
		base.Messages = append(base.Messages, e.Messages...)
		for _, k := range e.ByKind {
			o, status, _ := strings.Cut(k.Kind, " ")
			base.Examples = append(base.Examples, loadgen.Failure{Outcome: o, Status: status, Count: k.Count, Example: k.Example})
		}
		base.Resent += e.Resent
		base.StreamingAtDrain += e.Streaming
		base.MaxOutstanding += e.MaxOutstanding
		for _, b := range e.ITL {
			base.InterTokenGaps = append(base.InterTokenGaps, stats.Bucket{ValueNs: b.ValueNs, Count: b.Count})
		}
	}
	return base
}

// EndOf is a worker's end, from its shard's run and result: what its last
// chunk carries. Its count of unanswered samples is left out of the messages and
// the kinds (the merged run counts all of them in one). The answers
// streaming at its drain's end are not in a result: a worker that knows
// them sets End.Streaming.
func EndOf(run *loadgen.Run, res *loadgen.Result) recordwire.End {
	e := recordwire.End{StopReason: string(res.EndReason), Issued: res.SamplesIssued, Completed: res.SamplesCompleted,
		Failed: res.SamplesFailed, Unanswered: res.Unanswered, Resent: res.RequestsResent, LatenessMaxNs: res.IssueLateness.MaxNs}
	p50, _ := res.IssueLateness.At(0.5)
	p99, _ := res.IssueLateness.At(0.99)
	e.LatenessP50Ns, e.LatenessP99Ns = int64(p50), int64(p99)
	if res.ClosedLoop != nil {
		e.MaxOutstanding = res.ClosedLoop.MaxOutstanding
	}
	for _, b := range run.InterTokenGaps() {
		e.ITL = append(e.ITL, recordwire.Bucket{ValueNs: b.ValueNs, Count: b.Count})
	}
	e.Streaming = run.StreamingAtDrain()
	e.Messages = res.Errors
	if n := len(e.Messages); n > 0 && res.Unanswered > 0 && strings.HasPrefix(e.Messages[n-1], fmt.Sprintf("%d samples got no ", res.Unanswered)) {
		e.Messages = e.Messages[:n-1]
	}
	for _, f := range res.Failures {
		if f.Outcome == "unanswered" {
			continue // the merged run's own
		}
		kind := f.Outcome
		if f.Status != "" {
			kind += " " + f.Status
		}
		e.ByKind = append(e.ByKind, recordwire.KindCount{Kind: kind, Count: f.Count, Example: f.Example})
	}
	return e
}

package loadgen

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// WithIssuerSUTs gives issuers 1 … N−1 of a run with Engine.Issuers N their
// own SUTs; issuer 0 issues through the SUT given to NewRun. Each SUT is one
// client with its share of the connections, polled on its issuer's own OS
// thread: issuers share nothing on the way to the socket but the record.
func WithIssuerSUTs(suts ...SUT) Option { return func(r *Run) { r.issuerSUTs = suts } }

// checkIssuerSUTs: a run of N issuers has a SUT for each.
func (r *Run) checkIssuerSUTs() error {
	n := max(r.settings.Engine.Issuers, 1)
	if len(r.issuerSUTs) != n-1 {
		return fmt.Errorf("issuers: %d issuers need %d SUTs besides the run's, got %d", n, n-1, len(r.issuerSUTs))
	}
	for i, s := range r.issuerSUTs {
		if s == nil {
			return fmt.Errorf("issuers: issuer %d has no SUT", i+1)
		}
	}
	return nil
}

// issuer issues one shard of the trace: with N shards, shard k is the
// queries i with i mod N = k (Offline: the samples with sequence number
// mod N = k of its one query). It walks the trace with its own cursor,
// through its own SUT, polled on its own goroutine (an OS thread of its own
// when there are several), and waits for its own queries only. What it
// records goes into the run's one record.
type issuer struct {
	r      *Run
	k      int // its shard
	sut    SUT
	poller Poller      // nil: the SUT does not poll on the issuer's goroutine
	quiet  QuietPoller // the poller, when it can wait quietly
	cur    *trace.Cursor
	// done is complete bound once (a method value made per query would
	// allocate): the SUT's callback for this issuer's queries.
	done   func(Completion)
	notify chan struct{}
	w      *waiter
	// window is its share of engine.concurrency's outstanding queries.
	window int64
	// share is its part of Offline's query when the query is split
	// (Run.split): the QSL indices of samples k, k+N, …
	share []int

	issuedQ atomic.Int64 // its queries issued (only it writes; completions read)
	doneQ   atomic.Int64 // its queries answered (split Offline: the one query)
	issuedS int64        // its samples issued; read after it has stopped
	// Counted by the completions its SUT reports: samples done, the latest
	// completion (ns since the start), completions in progress (close
	// waits them out).
	doneS, lastDone, active atomic.Int64
	_                       [64]byte // its counters on their own cache line
}

// setUpIssuers makes the run's issuers: N in process (Engine.Issuers), or
// the one of a worker's shard (WithShard).
func (r *Run) setUpIssuers() error {
	n := max(r.settings.Engine.Issuers, 1)
	if err := r.checkIssuerSUTs(); err != nil {
		return err
	}
	if err := r.checkShard(); err != nil {
		return err
	}
	suts := append([]SUT{r.sut}, r.issuerSUTs...)
	shards := n
	if r.shardSet {
		shards = r.shardN
	}
	if c := r.settings.Engine.Concurrency; c > 0 && c < shards {
		return fmt.Errorf("issuers: %d issuers (or shards) need engine.concurrency of at least %d (each keeps a share of the window), got %d; lower issuers or raise engine.concurrency", shards, shards, c)
	}
	r.shardN = shards
	r.byShard = make([]*issuer, shards)
	for i, s := range suts {
		is := &issuer{r: r, k: i, sut: s, notify: make(chan struct{}, 1)}
		if r.shardSet {
			is.k = r.shardK
		}
		is.done = is.complete
		if c := int64(r.settings.Engine.Concurrency); c > 0 {
			sh := int64(shards)
			is.window = c / sh
			if int64(is.k) < c%sh {
				is.window++ // the remainder to the first ones
			}
		}
		r.iss = append(r.iss, is)
		r.byShard[is.k] = is
	}
	r.split = r.settings.Scenario == trace.Offline && shards > 1
	return nil
}

// complete is the issuer's SUTs' done callback.
func (is *issuer) complete(c Completion) {
	if is.r.split {
		is.r.completeShare(c, is)
		return
	}
	is.r.complete(c, is)
}

// next returns the issuer's next query of its shard: the cursor draws the
// queries of the other shards too (the trace is one sequence of draws),
// without issuing them.
func (is *issuer) next() (trace.Query, bool) {
	q, ok := is.cur.Next()
	for ok && !trace.InShard(q.Index, is.k, is.r.shardN) {
		q, ok = is.cur.Next()
	}
	return q, ok && q.Index < is.r.n // r.n: the trace's length (benchmarks cut it)
}

// count is the number of queries in the issuer's shard.
func (is *issuer) count() int {
	return trace.ShardLen(is.r.n, is.k, is.r.shardN)
}

// startIssuers readies the issuers for the clock: their cursors, pollers
// and waiters, and Offline's split.
func (r *Run) startIssuers() {
	for _, is := range r.iss {
		is.cur = r.tr.Cursor()
		is.poller = pollerFor(is.sut, r.clock)
		is.quiet, _ = is.poller.(QuietPoller)
		is.w = newWaiter(r, is)
	}
	if r.split {
		q, _ := r.tr.Cursor().Next()
		for _, is := range r.iss {
			is.share = trace.ShardSamples(is.share, q.Samples, is.k, r.shardN)
		}
	}
}

// issueAll runs every issuer until it stops, each then draining its own
// queries; it returns why the run stopped issuing and whether every
// issuer's queries were all answered by its drain's end.
func (r *Run) issueAll(issueCtx, sutCtx context.Context) (StopReason, bool) {
	if len(r.iss) == 1 {
		end := r.iss[0].run(issueCtx, sutCtx)
		return r.stopReason([]issuerEnd{end}), end.drained
	}
	ends := make([]issuerEnd, len(r.iss))
	var wg sync.WaitGroup
	for i, is := range r.iss[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ends[i+1] = is.run(issueCtx, sutCtx)
		}()
	}
	runtime.LockOSThread()
	ends[0] = r.iss[0].run(issueCtx, sutCtx)
	runtime.UnlockOSThread()
	wg.Wait()
	drained := true
	for _, e := range ends {
		drained = drained && e.drained
	}
	return r.stopReason(ends), drained
}

// issuerEnd is how one issuer ended.
type issuerEnd struct {
	reason  StopReason
	drained bool
}

// run issues the issuer's shard, then drains it: the drain timeout runs
// from the moment it stopped issuing, whatever stopped it.
func (is *issuer) run(issueCtx, sutCtx context.Context) issuerEnd {
	r := is.r
	reason := r.issueScenario(issueCtx, sutCtx, is)
	if err := is.cur.Err(); err != nil {
		// The issue loops read a pass's early end as the trace's end.
		reason = r.shapeEnded(err)
	}
	// Its pass may hold a trace file, whatever stopped it.
	_ = is.cur.Close()
	deadline := time.Now().Add(time.Duration(r.settings.Engine.DrainTimeoutMs) * time.Millisecond)
	if reason == StopStalled || r.firstStop() == StopStalled {
		return issuerEnd{reason, false}
	}
	return issuerEnd{reason, is.w.drain(deadline)}
}

// stopAll stops every issuer for reason: a stop of the run, not of one
// shard (a cancel, max_duration, too many in flight, a stall, the closed
// loops' natural end). The first reason recorded is the run's; it returns
// reason for the caller's return.
func (r *Run) stopAll(reason StopReason) StopReason {
	r.stopMu.Lock()
	if r.stopFirst == "" {
		r.stopFirst = reason
	}
	r.stopMu.Unlock()
	r.issueCancelM.Lock()
	if r.issueCancel != nil {
		r.issueCancel()
	}
	r.issueCancelM.Unlock()
	return reason
}

func (r *Run) firstStop() StopReason {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	return r.stopFirst
}

// stopReason is why the run stopped issuing: the first stop of the whole
// run if there was one; otherwise, of the issuers' own ends (each shard
// ran to its end), in this precedence: a cancel (the early verdict, or
// the caller's), max_query_count, running out of queries, completed.
func (r *Run) stopReason(ends []issuerEnd) StopReason {
	if s := r.firstStop(); s != "" {
		return s
	}
	if len(ends) == 1 {
		return ends[0].reason
	}
	rank := func(s StopReason) int {
		switch s {
		case StopCompleted:
			return 1
		case StopRanOut:
			return 2
		case StopMaxQueryCount:
			return 3
		case StopCancelled:
			return 4
		}
		return 5 // a stop of the whole run (stopAll has recorded it first)
	}
	best := StopCompleted
	for _, e := range ends {
		if rank(e.reason) > rank(best) {
			best = e.reason
		}
	}
	return best
}

// completeShare records a completion of issuer is's share of Offline's
// split query: its sample j is the query's sample is.k + j·N. Each sample
// is recorded as a completion of its own (a range of the share is not a
// range of the query).
func (r *Run) completeShare(c Completion, is *issuer) {
	if c.Query != 0 || is.issuedQ.Load() == 0 || c.Count <= 0 || c.First < 0 || c.First > len(is.share)-c.Count ||
		(c.Data != nil && len(c.Data) != c.Count) {
		r.protocolErrs.Add(1)
		r.noteError(fmt.Sprintf("protocol: completion of query %d samples [%d, %d+%d) of shard %d does not match an issued query", c.Query, c.First, c.First, c.Count, is.k))
		return
	}
	first, count, data := c.First, c.Count, c.Data
	for j := first; j < first+count; j++ {
		c.First, c.Count = is.k+j*r.shardN, 1
		if data != nil {
			c.Data = data[j-first : j-first+1]
		}
		r.complete(c, is)
	}
}

// samplesIssued is the samples the run's issuers issued (in this process).
func (r *Run) samplesIssued() int64 {
	var n int64
	for _, is := range r.iss {
		n += is.issuedS
	}
	return n
}

// queriesIssued is the queries issued so far (in this process).
func (r *Run) queriesIssued() int64 {
	if r.split {
		return min(r.iss[0].issuedQ.Load(), 1) // the one query, whoever issued
	}
	var n int64
	for _, is := range r.iss {
		n += is.issuedQ.Load()
	}
	return n
}

// queriesDone is the queries answered so far.
func (r *Run) queriesDone() int64 {
	if r.split {
		return r.iss[0].doneQ.Load() // every issuer counts the one query
	}
	var n int64
	for _, is := range r.iss {
		n += is.doneQ.Load()
	}
	return n
}

// samplesDone is the samples answered or failed by a completion so far.
func (r *Run) samplesDone() int64 {
	var n int64
	for _, is := range r.iss {
		n += is.doneS.Load()
	}
	return n
}

// lastDoneNs is the latest completion's offset (ns since the start).
func (r *Run) lastDoneNs() int64 {
	var t int64
	for _, is := range r.iss {
		t = max(t, is.lastDone.Load())
	}
	return t
}

package loadgen

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
)

// A GenerativeSUT is a SUT whose completions carry tokens (Completion.Tokens).
// The engine then sizes its per-sample token record before the clock
// starts; without it the record is made at the first completion that
// carries tokens (once, on that completion's goroutine).
type GenerativeSUT interface {
	Generative() bool
}

// A TokenObserver is an Observer that also sees each generative sample's
// token measurements as it completes successfully: ttft and tpot (0 for a
// sample of fewer than two tokens: it has none) count as the result's do;
// gaps are the sample's inter-token gaps, valid only during the call.
type TokenObserver interface {
	Tokens(query, output, input int, ttft, tpot time.Duration, gaps []time.Duration)
}

// tokenRecord is the per-sample record of a generative run, indexed by
// sample sequence number like Run.samples. A sample is generative when its
// completion carried at least one token (tokens > 0); each slot is written
// once, by the completion that claimed the sample, and read after close.
type tokenRecord struct {
	first  []int64 // first token, ns since its query's scheduled time (the run keeps no scheduled time per query)
	tokens []int32
	input  []int32
	// status is the outcome of a failed sample, an index into outcomes
	// plus one (0: not failed, or failed before the record existed).
	status []uint8
	itl    *stats.LiveHistogram
	// ttft and tpot are the answered samples' TTFT and TPOT (n ≥ 2) as
	// recordTokens returns them, for Progress; the result's are exact,
	// from the record. liveSamples and liveTokens count those samples and
	// their output tokens.
	ttft, tpot              *stats.LiveHistogram
	liveSamples, liveTokens atomic.Int64

	fromServer, fromResponses atomic.Int64 // samples by how Tokens was counted
	// burst marks the answered samples of two tokens or more whose
	// token-bearing responses all arrived at one instant (one read): their
	// E2E − TTFT measures no decoding, so they have no per-user rate.
	burst []bool
	// Claims set aside (Completion.TokensClaimed) over answered samples:
	// how many, the tokens claimed and the tokens counted instead.
	claimsSetAside, claimedTokens, countedTokens atomic.Int64

	mu       sync.Mutex // guards outcomes and outIndex
	outcomes []string
	outIndex map[string]uint8
}

func newTokenRecord(n int) *tokenRecord {
	return &tokenRecord{
		first: make([]int64, n), tokens: make([]int32, n), input: make([]int32, n),
		status: make([]uint8, n), burst: make([]bool, n), itl: stats.NewLiveHistogram(),
		ttft: stats.NewLiveHistogram(), tpot: stats.NewLiveHistogram(),
	}
}

// tokenRec returns the run's token record, making it on first use.
func (r *Run) tokenRec() *tokenRecord {
	if t := r.tok.Load(); t != nil {
		return t
	}
	t := newTokenRecord(r.n * r.spq)
	if r.tok.CompareAndSwap(nil, t) {
		return t
	}
	return r.tok.Load()
}

// clampTokens keeps a server's token count inside the record's int32.
func clampTokens(n int) int32 { return int32(min(max(n, 0), 1<<31-1)) }

// recordTokens records a successful generative completion of samples
// [from, to) (sequence numbers), at off ns since the start, sched its
// query's scheduled offset. It returns the sample's TTFT and TPOT for the
// observer.
func (r *Run) recordTokens(c *Completion, from, to int, off, sched int64) (ttft, tpot time.Duration) {
	t := r.tokenRec()
	first, n := r.keepMeasured(c, from, to, off, sched)
	if n >= 2 && together(c.Gaps) {
		for seq := from; seq < to; seq++ {
			t.burst[seq] = true
		}
	}
	if c.TokensClaimed > 0 {
		k := int64(to - from)
		t.claimsSetAside.Add(k)
		t.claimedTokens.Add(k * int64(c.TokensClaimed))
		t.countedTokens.Add(k * int64(n))
	}
	if c.TokensFromServer {
		t.fromServer.Add(int64(to - from))
	} else {
		t.fromResponses.Add(int64(to - from))
	}
	t.itl.RecordEach(c.Gaps)
	ttft, tpot = time.Duration(first-sched), samplePOT(max(off-sched, 0), first-sched, int64(n))
	t.recordLive(to-from, ttft, tpot, n)
	return ttft, tpot
}

// recordLive counts k answered samples of n tokens each, with their TTFT
// and TPOT, for Progress.
func (t *tokenRecord) recordLive(k int, ttft, tpot time.Duration, n int32) {
	if n < 1 {
		return // no token: tokenResult leaves it out too
	}
	for range k {
		t.ttft.Record(ttft)
		if n >= 2 {
			t.tpot.Record(tpot)
		}
	}
	t.liveSamples.Add(int64(k))
	t.liveTokens.Add(int64(k) * int64(n))
}

// together says whether gaps, a sample's inter-token gaps, are all zero:
// its token-bearing responses arrived in one read (none at all: one
// response).
func together(gaps []time.Duration) bool {
	for _, g := range gaps {
		if g != 0 {
			return false
		}
	}
	return true
}

// firstTokenAt is c's first token in ns since the start, its end (off)
// when it has none. A first token stamped before the query was due is a
// clock artefact, as a response stamped before it is; one after the end is
// impossible.
func (r *Run) firstTokenAt(c *Completion, off, sched int64) int64 {
	if c.FirstToken.IsZero() {
		return max(off, sched)
	}
	return min(max(int64(c.FirstToken.Sub(r.startTime)), sched), max(off, sched))
}

// keepMeasured keeps what a generative completion of samples [from, to)
// measured (its first token, the tokens and the prompt's length) for the
// per-sample export, whatever its outcome, and returns the first token's
// offset and the tokens. For a failed completion it is all that is kept:
// a failed sample enters no token statistic (LoadGen's rule, kept by
// eachTokenSample and tokenSamples, which skip failed samples) nor the
// count sources and the inter-token gaps, which hold answered samples
// only (recordTokens adds those).
func (r *Run) keepMeasured(c *Completion, from, to int, off, sched int64) (first int64, n int32) {
	t := r.tokenRec()
	first = r.firstTokenAt(c, off, sched)
	n, in := clampTokens(c.Tokens), clampTokens(c.InputTokens)
	for seq := from; seq < to; seq++ {
		t.first[seq], t.tokens[seq], t.input[seq], t.burst[seq] = first-sched, n, in, false
	}
	return first, n
}

// samplePOT is LoadGen's time per output token of one sample: (E2E − TTFT)
// / (n − 1), for n ≥ 2 tokens; 0 when there are fewer (there is no gap).
func samplePOT(e2e, ttft, n int64) time.Duration {
	if n < 2 {
		return 0
	}
	return time.Duration((e2e - ttft) / (n - 1))
}

// noteTokenFailure records the outcome of failed samples [from, to) of a
// generative run, for the per-sample export.
func (r *Run) noteTokenFailure(outcome string, from, to int) {
	t := r.tok.Load()
	if t == nil {
		return
	}
	t.mu.Lock()
	i, ok := t.outIndex[outcome]
	if !ok && len(t.outcomes) < 255 {
		if t.outIndex == nil {
			t.outIndex = map[string]uint8{}
		}
		t.outcomes = append(t.outcomes, outcome)
		i = uint8(len(t.outcomes))
		t.outIndex[outcome] = i
	}
	t.mu.Unlock()
	for seq := from; seq < to; seq++ {
		t.status[seq] = i
	}
}

// Generative says whether any sample of the run carried tokens. Read it
// after Execute has returned.
func (r *Run) Generative() bool {
	t := r.tok.Load()
	return t != nil && t.fromServer.Load()+t.fromResponses.Load() > 0
}

package loadgen

import (
	"context"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// SUT is the system under test as the engine sees it; pkg/sut adapts it to
// the KServe clients.
type SUT interface {
	// IssueQuery hands a query to the SUT. It must not block on the network
	// (the Server scheduler calls it inline and would fall behind). For each
	// of the query's samples, done must be called exactly once, from any
	// goroutine, as soon as that sample's response (or failure) is known;
	// one call may cover a contiguous range of samples (Query.Done,
	// Query.DoneRange). Extra or malformed calls are counted and ignored.
	IssueQuery(ctx context.Context, q Query, done func(Completion))
	// Name is the SUT's name for the result (sut_name); a network SUT's name
	// should contain "Network SUT".
	Name() string
}

// Poller is a SUT that does its network I/O on the issuer's goroutine.
// When the run uses the system clock, the engine calls PollUntil wherever
// it would otherwise sleep until a query is due or block until queries
// complete, and the SUT calls the done callbacks from inside PollUntil: no
// goroutine hand-off between the network and the engine. Open loop stays
// open loop: the engine still issues each query at its due time, and
// latency still counts from the scheduled time.
type Poller interface {
	// PollUntil does the SUT's pending I/O and calls done callbacks until
	// t, until ctx is done, or until it has called at least one, whichever
	// comes first. A t in the past still polls once without waiting.
	PollUntil(ctx context.Context, t time.Time)
}

// A QuietPoller is a Poller whose answers carry the times they arrived
// (the kernel's receive timestamps), so that a wait for a due time need not
// wake for each of them: delivered at the due time, they change no latency,
// and a wake-up per query is saved at low rates.
type QuietPoller interface {
	Poller
	// PollQuietUntil is PollUntil for a wait that is for t: answers that
	// arrive before t may be delivered at t rather than as they come.
	PollQuietUntil(ctx context.Context, t time.Time)
}

// A Resender is a SUT that sends a request again, on another connection,
// when it provably never reached the server: its connection was found
// closed, or reset, before any byte of it was written. A request that was
// written is never sent again (it may have run); if its connection closes
// before the answer, it fails. The engine reads the count once the run has
// ended, into Result.RequestsResent.
type Resender interface {
	Resends() uint64
}

// A StreamingSUT is a SUT that can say how many of its samples in
// flight have received tokens but not their answer's end. The engine asks
// at the drain timeout, so that answers still streaming then are named as
// such rather than as samples the SUT sent no response for.
type StreamingSUT interface {
	Streaming() int
}

// QSL is the query sample library: the data set the SUT's samples come from.
type QSL interface {
	TotalSampleCount() int
	PerformanceSampleCount() int
	// Load prepares the given QSL indices (the loaded performance set)
	// before the clock starts; it is not timed.
	Load(ctx context.Context, indices []int) error
}

// Query is one query of the trace, as issued.
type Query struct {
	// ID is the query's sequence number in issue order (its trace index).
	ID int
	// FirstSample is the sequence number of the query's first sample; sample
	// j of the query is FirstSample+j, unique within the run (use it for
	// request or response ids).
	FirstSample int
	// Samples are QSL indices, contiguous in one request when batched. The
	// slice aliases the trace: do not modify it.
	Samples []int
	// Stride is the step between the sequence numbers of the query's
	// samples: sample j is FirstSample + j·Stride (Sample). 0 (every query
	// but a split one) means 1. An Offline query split between issuers
	// (Settings.Engine.Issuers, WithShard) holds issuer k of N's share,
	// samples k, k+N, …: FirstSample k, Stride N.
	Stride int
	// Scheduled is when the query was due; latency counts from here. For
	// Server it is the ideal Poisson time even if the issue was late.
	Scheduled time.Time
	// Issued is when the engine handed the query to the SUT.
	Issued time.Time
	// Stage, Model and Request are a shaped run's (trace.Arrival): the
	// stage the query falls in, its model's index in the run's mix (the
	// SUT sends it there), a generative request's lengths and prompt
	// blocks from a trace file (nil: the QSL sample's prompt). Zero for a
	// LoadGen scenario.
	Stage   int
	Model   int
	Request *trace.Request

	// Session, Turn and Turns place a query of a run with sessions
	// (Settings.Sessions): its session's index, its turn (1-based; 0: no
	// session) and the turns its session plans. The SUT sends the
	// session's history with it and forgets the history after the last
	// turn or a failed one.
	Session, Turn, Turns int
}

// Sample returns the sequence number of the query's sample j (an index
// into Samples): unique within the run, for request or response ids.
func (q Query) Sample(j int) int { return q.FirstSample + j*max(q.Stride, 1) }

// Done returns the completion of all of the query's samples; err nil means
// success.
func (q Query) Done(err error) Completion {
	return Completion{Query: q.ID, First: 0, Count: len(q.Samples), Err: err}
}

// DoneRange returns the completion of samples [first, first+count) of the
// query (indices into Samples), e.g. one batch of Offline's query.
func (q Query) DoneRange(first, count int, err error) Completion {
	return Completion{Query: q.ID, First: first, Count: count, Err: err}
}

// Completion reports that a range of a query's samples finished.
type Completion struct {
	Query int // Query.ID
	First int // first sample of the range, an index into Query.Samples
	Count int // samples in the range, at least 1
	// Err is nil for a response; otherwise the samples failed (transport
	// error, timeout, non-2xx, malformed response): they count as over every
	// latency bound and make the run INVALID.
	Err error
	// At is when the response arrived, read from the run's clock (for the
	// system clock: time.Now()). Zero, the usual case, means "now": the
	// engine reads its clock when done is called, so an adapter should call
	// done the moment the response is decoded. Set it only when the response
	// arrived measurably earlier than the call can be made.
	At time.Time
	// Data holds the response bytes of each sample of the range, in order
	// (len Count), when the SUT was asked to capture responses (accuracy
	// mode, sampled accuracy logging); nil otherwise. The engine keeps the
	// slices: the SUT must not reuse them.
	Data [][]byte

	// The token measurements of a generative sample (Tokens > 0); a range
	// of several samples gives each the same (generative requests are one
	// sample each). A completion with Tokens 0 is not generative and costs
	// nothing more.
	//
	// FirstToken is when the first token-bearing response arrived, on the
	// run's clock (zero: with the last, at At: one answer).
	FirstToken time.Time
	// Tokens is the sample's output tokens; InputTokens its prompt's.
	Tokens      int
	InputTokens int
	// TokensFromServer: Tokens is the server's count (usage, output_ids),
	// else one per token-bearing response.
	TokensFromServer bool
	// TokensClaimed is the server's own count when it was not believed
	// (genai.BelievedTokens: more than max_tokens, fewer than the
	// token-bearing responses, far more than they can carry); Tokens is
	// then the responses counted. 0: believed, or no claim. The result's
	// warnings say how many samples' claims were set aside.
	TokensClaimed int
	// Gaps are the sample's inter-token gaps, in order. The engine folds
	// them in before done returns: the SUT may reuse the slice.
	Gaps []time.Duration
	// FirstTokenData is the first token-bearing response's content, when
	// responses are captured (Data): what LoadGen's FirstTokenComplete
	// logs as token_data. The engine keeps it.
	FirstTokenData []byte
}

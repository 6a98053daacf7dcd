// Package recordwire is the byte format of the record chunks a worker streams
// to its coordinator: the exact per-query issue times and per-sample
// outcomes of one shard of a distributed run, in numbered chunks so that a
// lost or repeated chunk is seen, and a lost worker costs at most its last.
//
// It is a protocol leaf: the standard library only. The engine's record
// types are converted to these plain ones by the worker's adapter
// (pkg/shardrec), so the format does not move when the engine does.
package recordwire

// Version is the format version a chunk's header carries. A decoder refuses
// any other: a coordinator and its workers run one build (registration
// refuses a worker of another version), so there is no negotiation.
const Version = 1

// magic opens every chunk: a body that is not a chunk at all (an HTML error
// page, a JSON body sent to the wrong route) is refused at byte 0.
const magic = "NLRW"

// Chunk is one numbered piece of one worker's record.
type Chunk struct {
	RunID  string
	Worker string // the worker's name, as it registered
	Shard  int    // k of Shards: the worker issues the queries i with i mod Shards = k
	Shards int
	// Seq numbers a worker's chunks of a run from 0: a gap is a lost chunk,
	// a repeat is a resend of one the coordinator already has.
	Seq uint64

	Issues  []Issue
	Samples []Sample
	// End is the worker's account of its shard, in its last chunk only;
	// nil in every other.
	End *End
}

// Issue is one issued query: its index in the run's trace, its scheduled
// time and the time it was handed to the client, both in ns since the run's
// start on the worker's clock (the coordinator's start, moved by the
// measured offset).
type Issue struct {
	Query       int64
	ScheduledNs int64
	IssuedNs    int64
}

// Sample is one answered (or failed) sample.
type Sample struct {
	Seq       int64 // the sample's sequence number in the run's record
	LatencyNs int64 // from the query's scheduled time to the answer (to the failure, when Failed)
	Failed    bool
	Kind      string // the failure's kind (Failed only; "" when the worker had none)

	// Generative is set when the sample carries token fields; a tensor run
	// leaves it false and pays one flag bit per sample for it.
	Generative   bool
	FirstTokenNs int64 // the first token's time from the query's scheduled time
	OutputTokens int64
	InputTokens  int64
	// TokensFromServer: OutputTokens is the server's count, not the
	// responses'. Burst: the token-bearing responses all arrived at one
	// instant (no decoding measured). Flag bits, free for tensor runs.
	TokensFromServer bool
	Burst            bool
}

// End is how a worker's shard ended, from the worker's side.
type End struct {
	StopReason string
	Issued     int64 // samples issued
	Completed  int64 // samples answered, failed ones included
	Failed     int64
	Unanswered int64 // samples issued and never answered by the drain's end

	LatenessP50Ns, LatenessP99Ns, LatenessMaxNs int64 // issue lateness of the shard's queries
	Resent                                      int64 // requests the client sent again
	// MaxOutstanding: a closed loop's most queries outstanding after an
	// issue. Streaming: answers still streaming when the drain ended.
	MaxOutstanding, Streaming int64

	Messages []string    // the failure messages the worker kept (bounded by the worker)
	ByKind   []KindCount // failures by kind
	// ITL is a generative run's inter-token gaps, as histogram buckets
	// (the records carry no gap).
	ITL []Bucket
}

// Bucket is a histogram bucket: its lowest value and its count.
type Bucket struct {
	ValueNs, Count int64
}

// KindCount is the failures of one kind, and the text of one of them.
type KindCount struct {
	Kind    string
	Count   int64
	Example string
}

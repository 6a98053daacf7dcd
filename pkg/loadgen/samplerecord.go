package loadgen

// SampleRecord is one sample's outcome as a shard's issuer recorded it: what
// a worker streams to its coordinator (pkg/recordwire carries it) and what
// a merged run's MergeSample takes.
//
// Until branch engine's RecordSink lands this is the merged run's own
// declaration, with the fields the brief gives the engine's.
type SampleRecord struct {
	Seq       int   // the sample's sequence number: Query.FirstSample + j
	LatencyNs int64 // from its query's scheduled time to its answer (to its failure, when Failed)
	Failed    bool
	// Kind is a failed sample's kind: the run's FailureClassifier's outcome,
	// then, when the server answered with one, a space and the status
	// ("timeout", "error HTTP 503"). Outcomes have no spaces.
	Kind string

	// A generative sample's token fields (Tokens > 0 or InputTokens > 0).
	FirstTokenNs     int64 // its first token, from its query's scheduled time
	Tokens           int32
	InputTokens      int32
	TokensFromServer bool // Tokens is the server's count, not the responses'
	Burst            bool // its token-bearing responses all arrived at one instant
}

package loadgen

import (
	"errors"
	"time"
)

// ErrUnanswered is the error an Observer sees for samples that never got a
// response: issuing stopped, the drain timeout passed, and the engine failed
// them itself.
var ErrUnanswered = errors.New("no response before the drain timeout")

// Observer watches a run as it goes, for live telemetry (pkg/metrics). The
// engine calls it from its hot paths: from the issuer goroutine and from
// whatever goroutines the SUT completes on, concurrently. Every method must
// be safe for concurrent use, must not block and should not allocate: the
// Server scheduler waits on Issued, and a SUT's response goroutine on
// Completed.
//
// For every issued query the engine reports each of its samples exactly
// once through Completed (with a response, a failure, or ErrUnanswered when
// the drain ends), then QueryDone once. Completions the engine rejects
// (protocol errors, completions after the run closed) are not reported.
// Every call has returned by the time Execute returns.
type Observer interface {
	// Issued: query (its Query.ID) with samples samples was handed to the
	// SUT lateness after it was due (0 for the closed-loop scenarios, which
	// schedule a query when they issue it).
	Issued(query, samples int, lateness time.Duration)
	// Completed: samples of query finished. latency counts from the query's
	// scheduled time, as the result's latencies do; err is nil for a
	// response, else the SUT's error (or ErrUnanswered, with latency 0).
	Completed(query, samples int, latency time.Duration, err error)
	// QueryDone: every sample of query has finished; failed if any failed.
	QueryDone(query int, failed bool)
}

// A ResendObserver is an Observer that also learns how many requests the
// SUT sent again (Resender), once, after the drain, before Execute
// returns; a SUT that is not a Resender reports 0.
type ResendObserver interface {
	Resent(n uint64)
}

// WithObserver makes the run report to o. A run without an observer pays
// one nil check per issue and per completion.
func WithObserver(o Observer) Option { return func(r *Run) { r.obs = o } }

// Package search finds the peak a deployed endpoint sustains: the highest
// Server QPS, or the most v0.5 MultiStream streams, whose runs still meet the
// scenario's constraint (MLPERF.md, Peak search; LOADGEN-REFERENCE.md §4).
//
// The decisions (which target to try next, when to stop, what the peak is)
// are Planners: pure state machines fed pass or fail, tested exactly. Run
// drives a Planner with a TrialRunner it is given and writes the search's
// record; the package does no I/O of its own but that record, so all of it
// is tested without a network. pkg/runner.FindPeak passes in the trial
// runner that carries out each trial as a full run with its own logs.
package search

package stats

import "errors"

// Errors returned by this package; test with errors.Is.
var (
	// ErrOutOfRange: a sample index outside the record (or negative).
	ErrOutOfRange = errors.New("stats: sample index out of range")
	// ErrInvalidLatency: a negative latency, or one too large to store.
	ErrInvalidLatency = errors.New("stats: invalid latency")
	// ErrAlreadyRecorded: the sample index was recorded before.
	ErrAlreadyRecorded = errors.New("stats: sample already recorded")
	// ErrEmpty: a statistic of no latencies.
	ErrEmpty = errors.New("stats: no latencies")
	// ErrInvalidArgument: a percentile, confidence or count outside its domain.
	ErrInvalidArgument = errors.New("stats: invalid argument")
)

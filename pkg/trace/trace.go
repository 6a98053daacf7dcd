package trace

import "time"

// Trace is everything LoadGen pre-generates for one performance run, in
// issue order. Every query carries the same number of samples.
type Trace struct {
	// Settings are the effective settings the trace was generated from.
	Settings Effective
	// LoadedSet lists the QSL indices of the performance set in the order
	// LoadGen loads and logs them (loaded_qsl_set), including MultiStream's
	// padding (the first samples_per_query-1 entries repeated at the end).
	LoadedSet []int
	// DistributionEnd is the loaded set's length without padding: sample
	// positions are drawn from [0, DistributionEnd).
	DistributionEnd int
	// SamplesPerQuery is the number of samples in every query (for Offline
	// with equal issue, padded to a whole number of loaded sets).
	SamplesPerQuery int
	// Duration is LoadGen's generated_query_duration: the scheduled offset
	// one inter-arrival past the last query.
	Duration time.Duration

	scheduled []time.Duration // per query, offset from the run's start
	samples   []int           // QSL indices, SamplesPerQuery per query
}

// Query is one generated query: when it is due and which samples it holds.
type Query struct {
	// Index is the query's position in issue order.
	Index int
	// Scheduled is the offset from the start of the run: the ideal Poisson
	// time for Server, and for the other scenarios the constant period
	// LoadGen uses only to decide how many queries to generate.
	Scheduled time.Duration
	// Samples are QSL indices. The slice aliases the trace: do not modify.
	Samples []int
}

// Len returns the number of generated queries.
func (t *Trace) Len() int { return len(t.scheduled) }

// Query returns the i-th query without allocating. It panics if i is out of
// range, like a slice index.
func (t *Trace) Query(i int) Query {
	n := t.SamplesPerQuery
	return Query{Index: i, Scheduled: t.scheduled[i], Samples: t.samples[i*n : (i+1)*n : (i+1)*n]}
}

// SampleCount returns the number of samples over all queries.
func (t *Trace) SampleCount() int { return len(t.samples) }

package api

import "time"

// Limits bound what one request may ask of the daemon: the body's size and
// the run's rate, length and concurrency (LOADGEND_MAX_QPS,
// LOADGEND_MAX_DURATION). A zero field takes its DefaultLimits value.
type Limits struct {
	MaxBodyBytes int64
	MaxQPS       float64
	// MaxDuration bounds every duration a spec sets (min/max duration,
	// latencies, timeouts) and the length a Server run's minimum query
	// count implies at its rate.
	MaxDuration time.Duration
	MaxInflight int
	MaxConns    int
	MaxBatch    int
	// MaxSamples bounds total_samples and performance_samples: the
	// synthetic library is held in memory, pre-encoded.
	MaxSamples int
	// MaxQueries bounds the queries a run's trace is generated for, which
	// is held in memory before the clock starts.
	MaxQueries uint64
	// MaxTraceSamples bounds the samples of a run's trace: queries ×
	// samples per query, Offline's one query of max(min_query_count, 1.1 ×
	// min_duration × offline_expected_qps) samples
	// (LOADGEND_MAX_TRACE_SAMPLES). A run keeps about 16 bytes a sample
	// from before the clock starts to its end (docs/daemon.md, "Memory"):
	// the exact latency record (8) and each query's issue times (a few).
	MaxTraceSamples uint64
	// DataRoot is the directory a spec's data may name files under
	// (LOADGEND_DATA_ROOT); empty refuses data.
	DataRoot string
	// SecretEnv names the environment variables a spec's @env: references
	// may read (LOADGEND_SECRET_ENV); none when empty.
	SecretEnv []string
	// SecretsDir is the directory a spec's @file: references may read
	// under (LOADGEND_SECRETS_DIR): header values and tls.client_cert,
	// tls.client_key; empty refuses them.
	SecretsDir string
	// AllowSearch accepts a "search" block; off until the peak search
	// exists, so a spec with one is refused at submission, not at run time.
	AllowSearch bool
}

// DefaultLimits are generous for a load generator on one host and small
// enough that a spec cannot exhaust the daemon's memory.
func DefaultLimits() Limits {
	return Limits{
		MaxBodyBytes: 1 << 20,
		MaxQPS:       1e6,
		MaxDuration:  24 * time.Hour,
		MaxInflight:  1 << 16,
		MaxConns:     1 << 12,
		MaxBatch:     1 << 16,
		MaxSamples:   1 << 20,
		MaxQueries:   1 << 26,
		// About 1.6 GB at 16 bytes a sample: 1000 s of Server at 100000
		// QPS, so an official 600 s run at that rate is accepted.
		MaxTraceSamples: DefaultMaxTraceSamples,
	}
}

// DefaultMaxTraceSamples is Limits.MaxTraceSamples' default, and
// LOADGEND_MAX_TRACE_SAMPLES'.
const DefaultMaxTraceSamples = 100_000_000

// WithDefaults is l with each zero field set to its DefaultLimits value.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	if !(l.MaxQPS > 0) {
		l.MaxQPS = d.MaxQPS
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = d.MaxDuration
	}
	if l.MaxInflight <= 0 {
		l.MaxInflight = d.MaxInflight
	}
	if l.MaxConns <= 0 {
		l.MaxConns = d.MaxConns
	}
	if l.MaxBatch <= 0 {
		l.MaxBatch = d.MaxBatch
	}
	if l.MaxSamples <= 0 {
		l.MaxSamples = d.MaxSamples
	}
	if l.MaxQueries == 0 {
		l.MaxQueries = d.MaxQueries
	}
	if l.MaxTraceSamples == 0 {
		l.MaxTraceSamples = d.MaxTraceSamples
	}
	return l
}

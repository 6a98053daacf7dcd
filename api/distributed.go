package api

import "strings"

// A distributed run's bounds and defaults (issue 29): the spec fields
// workers, workers_wait_ms, max_clock_uncertainty_ms and worker_timeout_ms.
const (
	// MaxWorkers bounds workers: each is a connection the coordinator
	// holds and a stream of records it merges.
	MaxWorkers = 1024
	// DefaultWorkersWaitMs is how long the daemon waits for enough idle
	// registered workers; MaxWorkersWaitMs bounds what a spec may ask.
	DefaultWorkersWaitMs = 60_000
	MaxWorkersWaitMs     = 3_600_000
	// DefaultMaxClockUncertaintyMs is the largest clock-offset uncertainty
	// a run starts with. A fraction is allowed: on loopback the workers'
	// tests measured uncertainties of 34–210 µs. MaxClockUncertaintyCeilMs
	// bounds it: past a second the workers' schedules are not one trace.
	DefaultMaxClockUncertaintyMs = 1.0
	MaxClockUncertaintyCeilMs    = 1000.0
	// DefaultWorkerTimeoutMs is how long a worker may miss its heartbeats
	// before it is lost; the bounds keep it above a heartbeat's round trip
	// and below a run's patience.
	DefaultWorkerTimeoutMs = 3_000
	MinWorkerTimeoutMs     = 100
	MaxWorkerTimeoutMs     = 600_000
)

// DistributedDefaults are the values a distributed run takes for the
// fields its spec leaves out.
type DistributedDefaults struct {
	WorkersWaitMs         uint64
	MaxClockUncertaintyMs float64
	WorkerTimeoutMs       uint64
}

// Distributed is s's distributed settings with their defaults.
func (s RunSpec) Distributed() DistributedDefaults {
	d := DistributedDefaults{DefaultWorkersWaitMs, DefaultMaxClockUncertaintyMs, DefaultWorkerTimeoutMs}
	if s.WorkersWaitMs != nil {
		d.WorkersWaitMs = *s.WorkersWaitMs
	}
	if s.MaxClockUncertaintyMs != nil {
		d.MaxClockUncertaintyMs = *s.MaxClockUncertaintyMs
	}
	if s.WorkerTimeoutMs != nil {
		d.WorkerTimeoutMs = *s.WorkerTimeoutMs
	}
	return d
}

// checkDistributed checks the distributed fields on their own. The three
// tuning fields are refused without workers: they would change nothing,
// and a spec that sets them but forgot workers would run on one host
// unnoticed.
func (s RunSpec) checkDistributed() error {
	if s.Workers < 0 || s.Workers > MaxWorkers {
		return fieldErr("workers", "%d: want 0 (a run on the daemon itself) to %d workers", s.Workers, MaxWorkers)
	}
	if s.Workers == 0 {
		for _, f := range []struct {
			name string
			set  bool
		}{{"workers_wait_ms", s.WorkersWaitMs != nil}, {"max_clock_uncertainty_ms", s.MaxClockUncertaintyMs != nil}, {"worker_timeout_ms", s.WorkerTimeoutMs != nil}} {
			if f.set {
				return fieldErr(f.name, "applies to a distributed run only: set workers to 1 or more, or leave %s out", f.name)
			}
		}
		return nil
	}
	if s.Workers > 1 && (strings.EqualFold(s.Scenario, "SingleStream") || strings.EqualFold(s.Scenario, "MultiStream")) {
		return fieldErr("workers", "%s is one sequence of queries, each issued when the last completes: it cannot be split over %d workers (use 1, or Server or Offline)", s.Scenario, s.Workers)
	}
	if s.Search != nil {
		return fieldErr("workers", "a search's trials run on the daemon: leave workers out of a search")
	}
	if w := s.WorkersWaitMs; w != nil && *w > MaxWorkersWaitMs {
		return fieldErr("workers_wait_ms", "%d: want 0 to %d ms", *w, MaxWorkersWaitMs)
	}
	if u := s.MaxClockUncertaintyMs; u != nil && !(*u > 0 && *u <= MaxClockUncertaintyCeilMs) {
		return fieldErr("max_clock_uncertainty_ms", "%s: want more than 0 and at most %s ms (fractions allowed, e.g. 0.25)", Num(*u), Num(MaxClockUncertaintyCeilMs))
	}
	if t := s.WorkerTimeoutMs; t != nil && (*t < MinWorkerTimeoutMs || *t > MaxWorkerTimeoutMs) {
		return fieldErr("worker_timeout_ms", "%d: want %d to %d ms", *t, MinWorkerTimeoutMs, MaxWorkerTimeoutMs)
	}
	return nil
}

// Package shape makes the load shapes that are not LoadGen scenarios
// (issue 31): stages and ramps of the arrival rate with Poisson, constant
// or gamma arrivals (Staged), replays of trace files (OpenTrace), and
// model mixes (Mix). Each is a trace.Shape: deterministic from the run's
// seeds, walked in passes, never held whole, so memory stays bounded
// whatever a run's length. The engine (pkg/loadgen) issues its arrivals
// open loop; latency counts from each arrival's time.
package shape

import "errors"

// ErrShape marks a load shape refused: the error names the flag (or the
// trace file's line) and says what to write.
var ErrShape = errors.New("load shape")

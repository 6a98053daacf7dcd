package loadgen

import "context"

// WithBeforeStart makes the run call f once, when its untimed part (the
// QSL load, the warm-up) is over, just before it waits for its start
// (WithStartAt, WithStartGate) and starts its clock: what must see the
// server as it is before the first timed query and after every untimed
// one (the snapshot of the server's statistics that a run's delta is
// taken from) goes there. f delays the start, never a timed query; it
// must return promptly.
func WithBeforeStart(f func(ctx context.Context)) Option {
	return func(r *Run) { r.beforeStart = f }
}

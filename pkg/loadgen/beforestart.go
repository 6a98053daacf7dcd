package loadgen

import "context"

// WithBeforeStart makes the run call f once, when its untimed part (the
// QSL load, the connections, the warm-up) is over, just before it waits for
// its start (WithStartAt, WithStartGate) and starts its clock: what must
// see the server as it is before the first timed query and after every
// untimed one goes there (the snapshot of the server's statistics a run's
// delta is taken from; the first scrape of its metrics), so the warm-up's
// requests are not counted as the run's. f delays the start, never a timed
// query; it must return promptly. Given more than once, every f is called,
// in order.
func WithBeforeStart(f func(ctx context.Context)) Option {
	return func(r *Run) { r.beforeStart = append(r.beforeStart, f) }
}

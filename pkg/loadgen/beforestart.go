package loadgen

import "context"

// WithBeforeStart makes the run call fn once the untimed part is done
// (the QSL load, the connections, the warm-up), just before the clock
// starts (and before a start gate's wait): what reads the server's own
// counters as the run starts does it there, so that the warm-up's
// requests are not counted as the run's and the reading costs the run
// nothing timed. fn should return promptly: the start waits for it.
func WithBeforeStart(fn func(ctx context.Context)) Option {
	return func(r *Run) { r.beforeStart = fn }
}

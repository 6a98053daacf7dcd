package trace

import "time"

// collect walks a cursor over the whole trace (tests only: a run never
// holds its queries).
func collect(t *Trace) []Query {
	out := make([]Query, 0, t.Len())
	c := t.Cursor()
	for q, ok := c.Next(); ok; q, ok = c.Next() {
		out = append(out, q)
	}
	return out
}

// scheduledOf is every query's offset, in order.
func scheduledOf(t *Trace) []time.Duration {
	var out []time.Duration
	for _, q := range collect(t) {
		out = append(out, q.Scheduled)
	}
	return out
}

// samplesOf is every query's samples, back to back.
func samplesOf(t *Trace) []int {
	var out []int
	for _, q := range collect(t) {
		out = append(out, q.Samples...)
	}
	return out
}

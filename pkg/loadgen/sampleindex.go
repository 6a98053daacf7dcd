package loadgen

import "github.com/netloadgen/netloadgen/pkg/trace"

// qslIndices gives the writers at the end of a run each sample's QSL
// index, walking a cursor of the trace (which holds no query) in sample
// sequence order: a pass over the trace, no per-sample storage.
type qslIndices struct {
	cur     *trace.Cursor
	spq     int
	q       trace.Query
	started bool
}

func newQSLIndices(tr *trace.Trace) *qslIndices {
	return &qslIndices{cur: tr.Cursor(), spq: tr.SamplesPerQuery}
}

// at returns sample seq's QSL index, or -1 past the trace. seq must not
// decrease from one call to the next.
func (x *qslIndices) at(seq int) int {
	qi := seq / x.spq
	for !x.started || x.q.Index < qi {
		q, ok := x.cur.Next()
		if !ok {
			return -1
		}
		x.q, x.started = q, true
	}
	return x.q.Samples[seq%x.spq]
}

// Package tracetest gives tests a trace's queries all at once. A run never
// holds them (pkg/trace keeps no query; its cursors replay them): use it in
// tests only.
package tracetest

import "github.com/netloadgen/netloadgen/pkg/trace"

// Collect returns every query of t, in issue order, walked with a cursor.
// Their samples alias the trace.
func Collect(t *trace.Trace) []trace.Query {
	out := make([]trace.Query, 0, t.Len())
	c := t.Cursor()
	for q, ok := c.Next(); ok; q, ok = c.Next() {
		out = append(out, q)
	}
	return out
}

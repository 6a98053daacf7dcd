package runner

import (
	"context"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// nopSUT answers every query at once.
type nopSUT struct{}

func (nopSUT) IssueQuery(_ context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	done(q.Done(nil))
}
func (nopSUT) Name() string { return "nop" }

// BenchmarkMixSUTIssue is what the mix adds to a query's issue: the
// dispatch by model and the sample's mapping into that model's library
// (a window of a table made before the clock: no allocation).
func BenchmarkMixSUTIssue(b *testing.B) {
	const total = 1024
	m := &mixSUT{suts: []loadgen.SUT{nopSUT{}, nopSUT{}, nopSUT{}}}
	for _, n := range []int{total, 100, 7} {
		m.index = append(m.index, mapIndices(identity(total), n))
	}
	samples := identity(total)
	done := func(loadgen.Completion) {}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s := i % total
		m.IssueQuery(ctx, loadgen.Query{ID: i, Samples: samples[s : s+1], Model: i % 3}, done)
	}
}

// BenchmarkDirectIssue is the same query to one SUT, for the ratio.
func BenchmarkDirectIssue(b *testing.B) {
	const total = 1024
	var sut loadgen.SUT = nopSUT{}
	samples := identity(total)
	done := func(loadgen.Completion) {}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s := i % total
		sut.IssueQuery(ctx, loadgen.Query{ID: i, Samples: samples[s : s+1], Model: i % 3}, done)
	}
}

package trace

import (
	"slices"
	"testing"
	"unsafe"
)

// cursorCases are one trace per sample-selection path a cursor replays.
func cursorCases() map[string]Requested {
	server := officialSettings(Server)
	server.ServerTargetQPS = 2000
	server.MinDurationMs = 1000
	single := officialSettings(SingleStream)
	single.MinQueryCount = 300
	single.MinDurationMs = 10
	equal := single
	equal.SampleConcatenatePermutation = true
	multi := officialSettings(MultiStream)
	multi.MultiStreamSamplesPerQuery = 8
	multi.MinQueryCount = 200
	multi.MinDurationMs = 10
	unique := officialSettings(Server)
	unique.ServerTargetQPS = 300
	unique.PerformanceIssueUnique = true
	same := officialSettings(MultiStream)
	same.MinDurationMs = 10
	same.PerformanceIssueSame = true
	same.PerformanceIssueSameIndex = 5
	offline := officialSettings(Offline)
	offline.MinQueryCount = 3000
	offline.SampleConcatenatePermutation = true
	return map[string]Requested{"server": server, "single": single, "single equal issue": equal, "multi": multi,
		"server unique": unique, "multi same": same, "offline equal issue": offline}
}

// TestCursorReplaysTheSameQueries: every cursor, and a cursor reset, gives
// the same Len queries, and the trace's figures are those of its queries.
func TestCursorReplaysTheSameQueries(t *testing.T) {
	for name, req := range cursorCases() {
		t.Run(name, func(t *testing.T) {
			tr := mustNew(t, req, QSL{1024, 512})
			first := collect(tr)
			if len(first) != tr.Len() || tr.Len() == 0 {
				t.Fatalf("a cursor gave %d queries, Len %d", len(first), tr.Len())
			}
			for i, q := range first {
				if q.Index != i || len(q.Samples) != tr.SamplesPerQuery {
					t.Fatalf("query %d: index %d, %d samples (want %d)", i, q.Index, len(q.Samples), tr.SamplesPerQuery)
				}
			}
			last := first[len(first)-1].Scheduled
			if tr.LastScheduled() != last || tr.Duration < last {
				t.Errorf("LastScheduled %v, Duration %v; the last query is at %v", tr.LastScheduled(), tr.Duration, last)
			}
			c := tr.Cursor()
			for range len(first) / 2 {
				c.Next()
			}
			c.Reset()
			for i := range 3 {
				other := tr.Cursor()
				for j, want := range first {
					got, ok := other.Next()
					if !ok || got.Index != want.Index || got.Scheduled != want.Scheduled || !slices.Equal(got.Samples, want.Samples) {
						t.Fatalf("pass %d query %d: %+v, %v; the first pass gave %+v", i, j, got, ok, want)
					}
					if r, _ := c.Next(); i == 0 && (r.Scheduled != want.Scheduled || !slices.Equal(r.Samples, want.Samples)) {
						t.Fatalf("reset cursor, query %d: %+v; want %+v", j, r, want)
					}
				}
				if q, ok := other.Next(); ok {
					t.Fatalf("pass %d went on past Len: %+v", i, q)
				}
			}
		})
	}
}

// TestQuerySamplesAliasTheTrace: a query's samples are a window of the
// loaded set (Offline: of its one kept query), capped so an append cannot
// write into the trace: nothing per query is allocated or kept.
func TestQuerySamplesAliasTheTrace(t *testing.T) {
	for name, req := range cursorCases() {
		t.Run(name, func(t *testing.T) {
			tr := mustNew(t, req, QSL{1024, 512})
			backing := tr.LoadedSet
			if tr.Settings.Scenario == Offline {
				backing = tr.offline
			}
			lo := uintptr(unsafe.Pointer(unsafe.SliceData(backing)))
			hi := lo + uintptr(len(backing))*unsafe.Sizeof(backing[0])
			for _, q := range collect(tr) {
				p := uintptr(unsafe.Pointer(unsafe.SliceData(q.Samples)))
				if p < lo || p+uintptr(len(q.Samples))*unsafe.Sizeof(q.Samples[0]) > hi {
					t.Fatalf("query %d's samples are not in the trace's set", q.Index)
				}
				if cap(q.Samples) != len(q.Samples) {
					t.Fatalf("query %d: cap %d, len %d: an append would write into the trace", q.Index, cap(q.Samples), len(q.Samples))
				}
			}
		})
	}
}

func TestCursorNextAllocatesNothing(t *testing.T) {
	for name, req := range cursorCases() {
		t.Run(name, func(t *testing.T) {
			tr := mustNew(t, req, QSL{1024, 512})
			c := tr.Cursor()
			allocs := testing.AllocsPerRun(max(tr.Len(), 10), func() {
				if _, ok := c.Next(); !ok {
					c.Reset()
				}
			})
			if allocs != 0 {
				t.Errorf("%.2f allocations a query", allocs)
			}
		})
	}
}

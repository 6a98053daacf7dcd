package loadgen

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The issue log gives back exactly the times it was given, in order, across
// its chunk boundaries, whatever their size or sign: steps back (a clock
// that went backwards), early issues, extreme values.
func TestIssueLogRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var want [][2]int64
	var l issueLog
	sched := int64(0)
	for i := range 50_000 {
		switch i % 5 {
		case 0:
			sched += rnd.Int64N(200_000) // a Poisson-like step
		case 1:
			sched -= rnd.Int64N(1000) // a step back
		case 2:
			sched += rnd.Int64N(math.MaxInt32) << 12 // a huge gap
		}
		issued := sched + rnd.Int64N(2_000_000) - 1000 // late, or a little early
		if i == 49_999 {
			sched, issued = math.MaxInt64/4, math.MinInt64/4
		}
		l.add(sched, issued)
		want = append(want, [2]int64{sched, issued})
	}
	if l.len() != len(want) || len(l.chunks) == 0 {
		t.Fatalf("len %d, %d chunks; want %d queries over several chunks", l.len(), len(l.chunks), len(want))
	}
	if l.last != want[len(want)-1] {
		t.Errorf("last = %v, want %v", l.last, want[len(want)-1])
	}
	n := 0
	l.each(func(q int, s, at int64) bool {
		if q != n || s != want[q][0] || at != want[q][1] {
			t.Fatalf("query %d (walk %d): got %d, %d; want %d, %d", q, n, s, at, want[q][0], want[q][1])
		}
		n++
		return true
	})
	if n != len(want) {
		t.Fatalf("walked %d queries, want %d", n, len(want))
	}
	stopped := 0
	l.each(func(q int, _, _ int64) bool { stopped++; return q < 9 })
	if stopped != 10 {
		t.Errorf("a walk told to stop after query 9 visited %d queries", stopped)
	}
}

// A Server query costs a few bytes: steps of tens of µs and lateness of a
// few µs take 3 + 2 bytes.
func TestIssueLogIsCompact(t *testing.T) {
	var l issueLog
	for q := range 100_000 {
		s := int64(q) * 50_000 // 20,000 QPS
		l.add(s, s+int64(q%4000))
	}
	if per := float64(l.size()) / float64(l.len()); per > 5.5 {
		t.Errorf("%.2f bytes a query, want at most 5.5", per)
	}
}

// Shard logs read back as one log in trace order: shard k's i-th entry is
// query k+i·N, whatever the number of shards, across chunk boundaries; a
// shard that stopped early leaves gaps, not a misnumbering; last is the
// highest-indexed query's.
func TestShardLogsInterleave(t *testing.T) {
	const queries = 120_000 // several chunks a shard
	for _, n := range []int{1, 2, 3, 7} {
		cut := map[int]int{}
		if n > 1 {
			cut[1] = 1000 // shard 1 stopped after 1000 of its queries
		}
		s := newShardLogs(n)
		var want [][3]int64
		for q := range queries {
			k := q % n
			if c, ok := cut[k]; ok && q/n >= c {
				continue
			}
			sched, issued := int64(q)*1000, int64(q)*1000+int64(q%97)
			s.add(k, sched, issued)
			want = append(want, [3]int64{int64(q), sched, issued})
		}
		if s.len() != len(want) {
			t.Fatalf("n=%d: len %d, want %d", n, s.len(), len(want))
		}
		i := 0
		s.each(func(q int, sched, issued int64) bool {
			if i >= len(want) || [3]int64{int64(q), sched, issued} != want[i] {
				t.Fatalf("n=%d: entry %d = (%d, %d, %d), want %v", n, i, q, sched, issued, want[i])
			}
			i++
			return true
		})
		if i != len(want) {
			t.Fatalf("n=%d: walked %d, want %d", n, i, len(want))
		}
		ls, li, ok := s.last()
		w := want[len(want)-1]
		if !ok || ls != w[1] || li != w[2] {
			t.Errorf("n=%d: last = %d, %d, %v; want %d, %d", n, ls, li, ok, w[1], w[2])
		}
		stopped := 0
		s.each(func(int, int64, int64) bool { stopped++; return stopped < 5 })
		if stopped != 5 {
			t.Errorf("n=%d: a walk told to stop at its 5th query visited %d", n, stopped)
		}
	}
	if _, _, ok := newShardLogs(3).last(); ok {
		t.Error("empty shard logs report a last query")
	}
}

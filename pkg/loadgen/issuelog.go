package loadgen

import (
	"encoding/binary"

	"github.com/netloadgen/netloadgen/pkg/offheap"
)

// issueLog is the run's record of when each query was due and when it was
// handed to the SUT, kept from its issue to the end of the run for the
// figures read after it (issue lateness, samples.txt, the time series).
// A query costs two varints, a few bytes instead of two int64s (issue 28):
// the scheduled time's step from the previous query's (4 bytes at most for
// steps under 134 ms; every issuer's schedule only moves forward, but the
// step is zigzag-coded so a clock that steps back costs a byte, not the
// record) and the lateness, issued − scheduled (2 bytes under 8 µs, 3 under
// 1 ms). Only the issuer appends; readers run after Execute. Its buffers
// are off the Go heap, as the latency record is (pkg/offheap): a log of a
// few hundred MB would otherwise raise the collector's goal by as much,
// and let garbage grow the process by that much again.
type issueLog struct {
	chunks    [][]byte
	cur       []byte
	n         int
	lastSched int64
	// last is the latest query's times, for the result's final_query_*.
	last [2]int64
}

// issueLogChunk is the size of the log's buffers: one mapping per ~50,000
// queries, on the issuer's goroutine (its pages are touched as they fill).
const issueLogChunk = 256 << 10

// add appends query n's scheduled and issued offsets (ns since the start).
func (l *issueLog) add(sched, issued int64) {
	if cap(l.cur)-len(l.cur) < 2*binary.MaxVarintLen64 {
		if l.cur != nil {
			l.chunks = append(l.chunks, l.cur)
		}
		l.cur = l.newChunk()
	}
	l.cur = binary.AppendVarint(l.cur, sched-l.lastSched)
	l.cur = binary.AppendVarint(l.cur, issued-sched)
	l.lastSched = sched
	l.last = [2]int64{sched, issued}
	l.n++
}

// newChunk maps a buffer that is unmapped once the log is unreachable; if
// the system refuses the mapping, the heap serves instead.
func (l *issueLog) newChunk() []byte {
	b, free, err := offheap.Bytes(issueLogChunk)
	if err != nil {
		return make([]byte, 0, issueLogChunk)
	}
	offheap.FreeWith(l, free)
	return b[:0]
}

// len is the number of queries logged.
func (l *issueLog) len() int { return l.n }

// size is the bytes the log holds.
func (l *issueLog) size() int {
	s := cap(l.cur)
	for _, c := range l.chunks {
		s += cap(c)
	}
	return s
}

// each calls fn with every logged query's scheduled and issued offsets, in
// issue order, until fn returns false.
func (l *issueLog) each(fn func(q int, sched, issued int64) bool) {
	var sched int64
	q := 0
	walk := func(b []byte) bool {
		for len(b) > 0 {
			step, k := binary.Varint(b)
			late, m := binary.Varint(b[k:])
			b = b[k+m:]
			sched += step
			if !fn(q, sched, sched+late) {
				return false
			}
			q++
		}
		return true
	}
	for _, c := range l.chunks {
		if !walk(c) {
			return
		}
	}
	walk(l.cur)
}

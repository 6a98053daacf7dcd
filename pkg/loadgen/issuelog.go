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

// reader walks one issue log: next gives its queries' times in order.
type issueLogReader struct {
	l     *issueLog
	chunk int // index of the chunk b is in; len(l.chunks): l.cur
	b     []byte
	sched int64
}

func (l *issueLog) reader() issueLogReader {
	rd := issueLogReader{l: l}
	if len(l.chunks) > 0 {
		rd.b = l.chunks[0]
	} else {
		rd.b = l.cur
	}
	return rd
}

// next returns the next query's scheduled and issued offsets; false at the
// log's end.
func (rd *issueLogReader) next() (sched, issued int64, ok bool) {
	for len(rd.b) == 0 {
		if rd.chunk >= len(rd.l.chunks) {
			return 0, 0, false
		}
		rd.chunk++
		if rd.chunk < len(rd.l.chunks) {
			rd.b = rd.l.chunks[rd.chunk]
		} else {
			rd.b = rd.l.cur
		}
	}
	step, k := binary.Varint(rd.b)
	late, m := binary.Varint(rd.b[k:])
	rd.b = rd.b[k+m:]
	rd.sched += step
	return rd.sched, rd.sched + late, true
}

// shardLogs is the issue log of a run whose queries are issued in N shards:
// shard k holds queries k, k+N, k+2N … in that order, appended by the one
// issuer that issues them (an in-process issuer, or a worker whose records
// a coordinator merges). Readers see one log in query order. A shard that
// stopped early just ends, so the queries issued need not be a prefix of
// the trace: a stop cuts the shards at different points. With one shard it
// is the one issueLog, walked as before.
type shardLogs struct {
	shards []*issueLog
}

// newShardLogs returns the logs of n ≥ 1 shards.
func newShardLogs(n int) *shardLogs {
	s := &shardLogs{shards: make([]*issueLog, max(n, 1))}
	for k := range s.shards {
		s.shards[k] = &issueLog{}
	}
	return s
}

// add appends shard's next query (shard, shard+N, … in turn): its
// scheduled and issued offsets, ns since the run's start. Only the shard's
// issuer calls it.
func (s *shardLogs) add(shard int, sched, issued int64) { s.shards[shard].add(sched, issued) }

// len is the number of queries logged over all shards.
func (s *shardLogs) len() int {
	n := 0
	for _, l := range s.shards {
		n += l.len()
	}
	return n
}

// size is the bytes the logs hold.
func (s *shardLogs) size() int {
	n := 0
	for _, l := range s.shards {
		n += l.size()
	}
	return n
}

// last is the scheduled and issued offsets of the logged query with the
// highest trace index (with one shard, the latest logged), for the result's
// final_query_*; ok false if none is logged.
func (s *shardLogs) last() (sched, issued int64, ok bool) {
	best := -1
	for k, l := range s.shards {
		if l.n == 0 {
			continue
		}
		if q := k + (l.n-1)*len(s.shards); q > best {
			best, sched, issued = q, l.last[0], l.last[1]
		}
	}
	return sched, issued, best >= 0
}

// each calls fn with every logged query's trace index and its scheduled
// and issued offsets, in trace order, until fn returns false.
func (s *shardLogs) each(fn func(q int, sched, issued int64) bool) {
	n := len(s.shards)
	if n == 1 {
		s.shards[0].each(fn)
		return
	}
	rds := make([]issueLogReader, n)
	for k, l := range s.shards {
		rds[k] = l.reader()
	}
	for q, live := 0, n; live > 0; q++ {
		rd := &rds[q%n]
		if rd.l == nil {
			continue
		}
		sched, issued, ok := rd.next()
		if !ok {
			rd.l = nil // this shard ended; the others go on
			live--
			continue
		}
		if !fn(q, sched, issued) {
			return
		}
	}
}

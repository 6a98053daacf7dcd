// Package shardrec is a worker's side of a distributed run's records: it
// takes its shard's issues and completions from the engine (a RecordSink)
// and hands them out as numbered record chunks (pkg/recordwire), sent to
// the coordinator during the run so that a lost worker loses at most its
// last chunk.
package shardrec

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/recordwire"
)

// ErrBacklog: the coordinator took no chunk for so long that the chunks
// waiting for it passed Options.MaxBacklog. The streamer keeps no more
// records (it counts them, Dropped); the worker should end its run: its
// coordinator finds it lost anyway, and a record it cannot deliver is worth
// no load on the target.
var ErrBacklog = errors.New("shardrec: the coordinator has taken no chunk for too long")

// SendFunc delivers one encoded chunk. An error means "not delivered, try
// again": the chunk is kept and sent again, with the same sequence number
// and bytes, before any later one. A chunk that did arrive but whose answer
// was lost is therefore sent twice: the coordinator acknowledges a sequence
// number it already has without applying it again.
type SendFunc func(ctx context.Context, chunk []byte) error

// Header names the run and the shard a streamer's chunks carry.
type Header struct {
	RunID  string
	Worker string
	Shard  int // k of Shards
	Shards int
}

// Options tune a Streamer; a zero field takes its default.
type Options struct {
	// Interval between chunks (default 200 ms): what a lost worker loses at
	// most, and the coordinator's delay behind the run.
	Interval time.Duration
	// MaxRecords cuts a chunk early at this many records (default 16,384,
	// ~100 KB), so a fast worker's chunks stay small.
	MaxRecords int
	// MaxBacklog bounds the bytes of chunks kept while the coordinator
	// takes none (default 64 MiB: at the ~12 bytes an issue and its sample
	// take together, BenchmarkAppend, about a minute of a 100,000
	// queries/s worker). Past it Run returns ErrBacklog.
	MaxBacklog int
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = 200 * time.Millisecond
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = 16384
	}
	if o.MaxBacklog <= 0 {
		o.MaxBacklog = 64 << 20
	}
	return o
}

// Streamer accumulates a shard's records and cuts them into chunks. Its
// QueryIssued and SampleDone are the engine's RecordSink: safe from any
// goroutine, one short critical section and no allocation per record once
// its arrays have grown (BenchmarkSampleDone). Drive it with Run and end it
// with Finish, or call Flush from a loop of one's own (not both).
type Streamer struct {
	h   Header
	opt Options

	mu      sync.Mutex // guards cur
	cur     recordwire.Chunk
	full    chan struct{} // a chunk's worth of records is waiting
	dead    atomic.Bool   // ErrBacklog: records are dropped
	dropped atomic.Int64

	// The sender's: Run, Flush and Finish, one at a time.
	sendMu  sync.Mutex
	spare   recordwire.Chunk // the arrays cur had before the last cut, for the next
	enc     recordwire.Encoder
	seq     uint64
	pending [][]byte // encoded, not yet delivered, oldest first
	backlog int      // their bytes
	free    [][]byte // delivered chunks' buffers, for reuse
	sent    atomic.Int64
}

var _ loadgen.RecordSink = (*Streamer)(nil)

// NewStreamer returns a streamer of h's records.
func NewStreamer(h Header, opt Options) *Streamer {
	return &Streamer{h: h, opt: opt.withDefaults(), full: make(chan struct{}, 1)}
}

// QueryIssued records that query q was issued: scheduled and issued at
// those offsets (ns since the run's start). shard is the issuer's; the
// chunk's header carries the streamer's.
func (s *Streamer) QueryIssued(_, q int, scheduledNs, issuedNs int64) {
	if s.dead.Load() {
		s.dropped.Add(1)
		return
	}
	s.mu.Lock()
	s.cur.Issues = append(s.cur.Issues, recordwire.Issue{Query: int64(q), ScheduledNs: scheduledNs, IssuedNs: issuedNs})
	n := len(s.cur.Issues) + len(s.cur.Samples)
	s.mu.Unlock()
	s.signal(n)
}

// SampleDone records one sample's outcome.
func (s *Streamer) SampleDone(r loadgen.SampleRecord) {
	if s.dead.Load() {
		s.dropped.Add(1)
		return
	}
	w := recordwire.Sample{Seq: int64(r.Seq), LatencyNs: r.LatencyNs, Failed: r.Failed, Kind: r.Kind}
	if r.Tokens > 0 || r.InputTokens > 0 {
		w.Generative, w.FirstTokenNs, w.OutputTokens, w.InputTokens = true, r.FirstTokenNs, int64(r.Tokens), int64(r.InputTokens)
		w.TokensFromServer, w.Burst = r.TokensFromServer, r.Burst
	}
	s.mu.Lock()
	s.cur.Samples = append(s.cur.Samples, w)
	n := len(s.cur.Issues) + len(s.cur.Samples)
	s.mu.Unlock()
	s.signal(n)
}

// signal wakes Run when a chunk's worth is waiting (once: the channel holds
// one wake-up).
func (s *Streamer) signal(n int) {
	if n == s.opt.MaxRecords {
		select {
		case s.full <- struct{}{}:
		default:
		}
	}
}

// Dropped is the records not kept since Run gave up (ErrBacklog).
func (s *Streamer) Dropped() int64 { return s.dropped.Load() }

// Sent is the chunks delivered.
func (s *Streamer) Sent() int64 { return s.sent.Load() }

// Flush returns the records since the last cut as the next chunk, encoded
// (the caller owns the bytes), or nil when there are none.
func (s *Streamer) Flush() []byte {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	return s.cut(nil, nil, false)
}

// cut takes the waiting records (and end, when given) as the next chunk,
// encoded after dst; nil when there is nothing to send.
func (s *Streamer) cut(dst []byte, end *recordwire.End, always bool) []byte {
	s.spare.Issues, s.spare.Samples = s.spare.Issues[:0], s.spare.Samples[:0]
	s.mu.Lock()
	c := s.cur
	s.cur.Issues, s.cur.Samples = s.spare.Issues, s.spare.Samples
	s.mu.Unlock()
	if len(c.Issues)+len(c.Samples) == 0 && end == nil && !always {
		s.spare = c
		return nil
	}
	c.RunID, c.Worker, c.Shard, c.Shards, c.Seq, c.End = s.h.RunID, s.h.Worker, s.h.Shard, s.h.Shards, s.seq, end
	s.seq++
	b := s.enc.Append(dst, &c)
	s.spare = c
	return b
}

// queue cuts the waiting records into a pending chunk.
func (s *Streamer) queue(end *recordwire.End) {
	var buf []byte
	if n := len(s.free); n > 0 {
		buf, s.free = s.free[n-1][:0], s.free[:n-1]
	}
	if b := s.cut(buf, end, end != nil); b != nil {
		s.pending = append(s.pending, b)
		s.backlog += len(b)
	} else if buf != nil {
		s.free = append(s.free, buf)
	}
}

// deliver sends the pending chunks, oldest first, until one fails.
func (s *Streamer) deliver(ctx context.Context, send SendFunc) error {
	for len(s.pending) > 0 {
		if err := send(ctx, s.pending[0]); err != nil {
			return err
		}
		b := s.pending[0]
		s.backlog -= len(b)
		s.pending[0] = nil
		s.pending = s.pending[1:]
		s.sent.Add(1)
		if len(s.free) < 4 {
			s.free = append(s.free, b)
		}
	}
	return nil
}

// Run sends a chunk every Interval, or sooner when MaxRecords are waiting,
// until ctx ends (it returns nil then: Finish sends what is left). A failed
// send is retried at the next chunk; once the chunks waiting pass
// MaxBacklog it stops keeping records and returns ErrBacklog.
func (s *Streamer) Run(ctx context.Context, send SendFunc) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	t := time.NewTicker(s.opt.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.full:
		}
		s.queue(nil)
		if err := s.deliver(ctx, send); err != nil && s.backlog > s.opt.MaxBacklog {
			s.dead.Store(true)
			return fmt.Errorf("%w: %d chunks, %d bytes unsent (limit %d); last error: %w", ErrBacklog, len(s.pending), s.backlog, s.opt.MaxBacklog, err)
		}
	}
}

// Finish sends the records left and the worker's end, in the last chunk,
// after every chunk still pending, retrying every Interval until all are
// delivered or ctx ends (its error then, wrapped). Call it once Run has
// returned.
func (s *Streamer) Finish(ctx context.Context, end recordwire.End, send SendFunc) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.queue(&end)
	t := time.NewTicker(s.opt.Interval)
	defer t.Stop()
	for {
		err := s.deliver(ctx, send)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shardrec: %d chunks undelivered at the end: %w (last send: %w)", len(s.pending), ctx.Err(), err)
		case <-t.C:
		}
	}
}

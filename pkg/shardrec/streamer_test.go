package shardrec

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/recordwire"
)

var hdr = Header{RunID: "run-1", Worker: "w-b", Shard: 1, Shards: 3}

// coordinator receives chunks as a coordinator would: a repeated sequence
// number is acknowledged and not applied; a gap is an error of the test.
type coordinator struct {
	t       *testing.T
	mu      sync.Mutex
	next    uint64
	seen    map[uint64][]byte
	got     []*recordwire.Chunk
	fail    func(seq uint64, attempt int) error // nil: accept
	tries   map[uint64]int
	arrived chan struct{}
}

func newCoordinator(t *testing.T) *coordinator {
	return &coordinator{t: t, seen: map[uint64][]byte{}, tries: map[uint64]int{}, arrived: make(chan struct{}, 1024)}
}

func (c *coordinator) send(_ context.Context, b []byte) error {
	ch, err := recordwire.Decode(b, recordwire.Limits{})
	if err != nil {
		c.t.Errorf("a chunk that does not decode: %v", err)
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tries[ch.Seq]++
	if prev, ok := c.seen[ch.Seq]; ok {
		if !bytes.Equal(prev, b) {
			c.t.Errorf("chunk %d sent again with other bytes", ch.Seq)
		}
		return nil // acknowledged, not applied again
	}
	if c.fail != nil {
		if err := c.fail(ch.Seq, c.tries[ch.Seq]); err != nil {
			return err
		}
	}
	if ch.Seq != c.next {
		c.t.Errorf("chunk %d arrived, want %d: a chunk lost or out of order", ch.Seq, c.next)
	}
	c.next = ch.Seq + 1
	c.seen[ch.Seq] = bytes.Clone(b)
	c.got = append(c.got, ch)
	select {
	case c.arrived <- struct{}{}:
	default:
	}
	return nil
}

// feed issues and completes n queries of shard 1 of 3 from g goroutines.
func feed(s *Streamer, n, g int) {
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			for i := w; i < n; i += g {
				q := 1 + 3*i
				s.QueryIssued(1, q, int64(i)*1000, int64(i)*1000+7)
				r := loadgen.SampleRecord{Seq: q, LatencyNs: int64(100 + i)}
				if i%10 == 0 {
					r.Failed, r.Kind = true, "timeout"
				}
				if i%3 == 0 {
					r.Tokens, r.InputTokens, r.FirstTokenNs, r.Burst, r.TokensFromServer = 5, 9, 50, i%2 == 0, i%4 == 0
				}
				s.SampleDone(r)
			}
		})
	}
	wg.Wait()
}

// check: every record once, the chunks numbered from 0 without a gap, the
// header on each, the end on the last only.
func (c *coordinator) check(n int) {
	c.t.Helper()
	issues, samples := map[int64]bool{}, map[int64]recordwire.Sample{}
	for i, ch := range c.got {
		if ch.RunID != hdr.RunID || ch.Worker != hdr.Worker || ch.Shard != hdr.Shard || ch.Shards != hdr.Shards {
			c.t.Fatalf("chunk %d header %+v", i, ch)
		}
		if (ch.End != nil) != (i == len(c.got)-1) {
			c.t.Fatalf("chunk %d of %d has end %v", i, len(c.got), ch.End)
		}
		for _, is := range ch.Issues {
			if issues[is.Query] || is.IssuedNs-is.ScheduledNs != 7 {
				c.t.Fatalf("issue %+v twice or altered", is)
			}
			issues[is.Query] = true
		}
		for _, sm := range ch.Samples {
			if _, dup := samples[sm.Seq]; dup {
				c.t.Fatalf("sample %d twice", sm.Seq)
			}
			samples[sm.Seq] = sm
		}
	}
	if len(issues) != n || len(samples) != n {
		c.t.Fatalf("%d issues and %d samples delivered, want %d each", len(issues), len(samples), n)
	}
	for seq, sm := range samples {
		i := (seq - 1) / 3
		want := recordwire.Sample{Seq: seq, LatencyNs: 100 + i}
		if i%10 == 0 {
			want.Failed, want.Kind = true, "timeout"
		}
		if i%3 == 0 {
			want.Generative, want.OutputTokens, want.InputTokens, want.FirstTokenNs, want.Burst, want.TokensFromServer = true, 5, 9, 50, i%2 == 0, i%4 == 0
		}
		if sm != want {
			c.t.Fatalf("sample %d delivered as %+v, want %+v", seq, sm, want)
		}
	}
}

func TestStreamerDeliversEveryRecordOnce(t *testing.T) {
	c := newCoordinator(t)
	s := NewStreamer(hdr, Options{Interval: time.Millisecond, MaxRecords: 100})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, c.send) }()
	const n = 20_000
	feed(s, n, 8)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	end := recordwire.End{StopReason: "completed", Issued: n, Completed: n, Failed: n / 10}
	if err := s.Finish(context.Background(), end, c.send); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	c.check(n)
	if got := c.got[len(c.got)-1].End; got.StopReason != "completed" || got.Issued != n {
		t.Errorf("end %+v", got)
	}
	if int64(len(c.got)) != s.Sent() || len(c.got) < 2 {
		t.Errorf("%d chunks arrived, Sent says %d", len(c.got), s.Sent())
	}
}

// A coordinator that refuses chunks now and then: they are sent again, in
// order, with the same bytes, and nothing is lost or doubled.
func TestStreamerResendsRefusedChunks(t *testing.T) {
	c := newCoordinator(t)
	c.fail = func(seq uint64, attempt int) error {
		if seq%3 == 1 && attempt < 3 {
			return errors.New("503 coordinator busy")
		}
		return nil
	}
	s := NewStreamer(hdr, Options{Interval: time.Millisecond, MaxRecords: 50})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, c.send) }()
	const n = 5000
	feed(s, n, 4)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := s.Finish(context.Background(), recordwire.End{StopReason: "completed"}, c.send); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	c.check(n)
	retried := 0
	for _, k := range c.tries {
		if k > 1 {
			retried++
		}
	}
	if retried == 0 {
		t.Error("no chunk was refused: the test tested no resend")
	}
}

// A chunk goes as soon as MaxRecords wait, not at the interval.
func TestStreamerCutsAtMaxRecords(t *testing.T) {
	c := newCoordinator(t)
	s := NewStreamer(hdr, Options{Interval: time.Hour, MaxRecords: 10})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Run(ctx, c.send) }()
	for i := range 5 {
		s.QueryIssued(1, 1+3*i, 0, 7)
		s.SampleDone(loadgen.SampleRecord{Seq: 1 + 3*i})
	}
	<-c.arrived // an hour's interval: only the count sent it
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) != 1 || len(c.got[0].Issues)+len(c.got[0].Samples) < 10 {
		t.Fatalf("got %d chunks, the first with %d records", len(c.got), len(c.got[0].Issues)+len(c.got[0].Samples))
	}
}

// An unreachable coordinator: the chunks wait up to MaxBacklog, then Run
// gives up with ErrBacklog and later records are counted, not kept.
func TestStreamerBacklogIsBounded(t *testing.T) {
	unreachable := errors.New("connection refused")
	s := NewStreamer(hdr, Options{Interval: time.Millisecond, MaxRecords: 100, MaxBacklog: 4096})
	done := make(chan error, 1)
	go func() {
		done <- s.Run(context.Background(), func(context.Context, []byte) error { return unreachable })
	}()
	i := 0
	var err error
	for err == nil {
		select {
		case err = <-done:
		default:
			s.QueryIssued(1, 1+3*i, int64(i), int64(i)+7)
			i++
		}
	}
	if !errors.Is(err, ErrBacklog) || !errors.Is(err, unreachable) {
		t.Fatalf("Run: %v, want ErrBacklog wrapping the last send's error", err)
	}
	s.SampleDone(loadgen.SampleRecord{Seq: 1})
	if s.Dropped() == 0 {
		t.Error("a record after ErrBacklog was kept")
	}
	s.sendMu.Lock()
	backlog, last := s.backlog, len(s.pending[len(s.pending)-1])
	s.sendMu.Unlock()
	if backlog-last > 4096 {
		t.Errorf("backlog %d bytes before its last chunk of %d: over the 4096 allowed", backlog-last, last)
	}
}

// Finish gives up when its context ends, saying what is undelivered.
func TestStreamerFinishHonoursItsContext(t *testing.T) {
	s := NewStreamer(hdr, Options{Interval: time.Millisecond})
	s.QueryIssued(1, 1, 0, 7)
	ctx, cancel := context.WithCancel(context.Background())
	attempts := 0
	err := s.Finish(ctx, recordwire.End{}, func(context.Context, []byte) error {
		if attempts++; attempts == 3 {
			cancel()
		}
		return errors.New("timeout")
	})
	if !errors.Is(err, context.Canceled) || attempts < 3 {
		t.Fatalf("Finish: %v after %d attempts, want context.Canceled after 3", err, attempts)
	}
}

// A coordinator that never answers: Run returns once its context ends (the
// send honours it).
func TestStreamerRunReturnsFromASilentCoordinator(t *testing.T) {
	s := NewStreamer(hdr, Options{Interval: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	sending := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- s.Run(ctx, func(ctx context.Context, _ []byte) error {
			select {
			case sending <- struct{}{}:
			default:
			}
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	s.QueryIssued(1, 1, 0, 7)
	<-sending
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestFlush(t *testing.T) {
	s := NewStreamer(hdr, Options{})
	if b := s.Flush(); b != nil {
		t.Fatalf("Flush of nothing: %d bytes", len(b))
	}
	for k := range 3 {
		s.QueryIssued(1, 1+3*k, 10, 17)
		b := s.Flush()
		c, err := recordwire.Decode(b, recordwire.Limits{})
		if err != nil || c.Seq != uint64(k) || len(c.Issues) != 1 || c.Issues[0].Query != int64(1+3*k) {
			t.Fatalf("Flush %d: %+v, %v", k, c, err)
		}
	}
}

// BenchmarkSampleDone: the cost of a record to the completing goroutines,
// as many as the CPUs, with Run sending in the background.
func BenchmarkSampleDone(b *testing.B) {
	s := NewStreamer(hdr, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, func(context.Context, []byte) error { return nil }) }()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			s.SampleDone(loadgen.SampleRecord{Seq: i, LatencyNs: 1_000_000 + int64(i&1023)})
			i++
		}
	})
	cancel()
	<-done
}

// BenchmarkQueryIssued: the cost of a record to the issuer.
func BenchmarkQueryIssued(b *testing.B) {
	s := NewStreamer(hdr, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, func(context.Context, []byte) error { return nil }) }()
	b.ReportAllocs()
	for i := range b.N {
		s.QueryIssued(1, 1+3*i, int64(i)*10_000, int64(i)*10_000+500)
	}
	cancel()
	<-done
}

package shardrec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/recordwire"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// virtualClock jumps to each due time: every query is issued exactly on
// schedule, so one issuer and three workers issue at the same instants.
type virtualClock struct {
	base time.Time
	now  atomic.Int64
}

func (c *virtualClock) Now() time.Time { return c.base.Add(time.Duration(c.now.Load())) }
func (c *virtualClock) SleepUntil(ctx context.Context, t time.Time) {
	if d := int64(t.Sub(c.base)); ctx.Err() == nil && d > c.now.Load() {
		c.now.Store(d)
	}
}

var errOverloaded = errors.New("HTTP 503: overloaded")

// scriptedSUT answers each query at once, stamped its scripted latency
// after its issue, with tokens and their gaps (every fourth a burst, every
// third counted by the server); some fail.
type scriptedSUT struct{}

func (scriptedSUT) Name() string     { return "scripted" }
func (scriptedSUT) Generative() bool { return true }
func (scriptedSUT) IssueQuery(_ context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	var err error
	if q.ID%50 == 7 {
		err = errOverloaded
	}
	c := q.Done(err)
	c.At = q.Issued.Add(time.Duration(1+q.ID%5) * time.Millisecond)
	c.Tokens, c.InputTokens, c.TokensFromServer = 2+q.ID%5, 50, q.ID%3 == 0
	c.FirstToken = c.At.Add(-time.Duration(c.Tokens) * 100 * time.Microsecond)
	c.Gaps = make([]time.Duration, c.Tokens-1)
	for i := range c.Gaps {
		if q.ID%4 != 0 {
			c.Gaps[i] = time.Duration(50+q.ID%40) * time.Microsecond
		}
	}
	done(c)
}

func classify(err error) (string, string) {
	if errors.Is(err, errOverloaded) {
		return "error", "HTTP 503"
	}
	return "other", ""
}

func settings(t *testing.T) loadgen.Settings {
	t.Helper()
	s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	s.Scenario = trace.Server
	s.QSLRNGSeed, s.SampleIndexRNGSeed, s.ScheduleRNGSeed = 1, 2, 3
	s.MinDurationMs, s.MinQueryCount = 200, 50
	s.ServerTargetQPS, s.ServerTargetLatencyNs = 1000, 10_000_000
	return s
}

var quiet = loadgen.WithLogger(slog.New(slog.DiscardHandler))

func run(t *testing.T, s loadgen.Settings, opts ...loadgen.Option) (*loadgen.Run, *loadgen.Result) {
	t.Helper()
	clk := &virtualClock{base: time.Unix(1_700_000_000, 0)}
	r, err := loadgen.NewRun(s, scriptedSUT{}, loadgen.QSLCounts{Total: 1000, Performance: 256},
		append([]loadgen.Option{loadgen.WithClock(clk), quiet, loadgen.WithFailureClassifier(classify)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r, res
}

// worker runs shard k of n, streaming its records to send; stop, when not
// nil, ends its streaming after that many chunks, as a killed worker's.
func worker(t *testing.T, s loadgen.Settings, k, n int, send SendFunc) *loadgen.Result {
	t.Helper()
	st := NewStreamer(Header{RunID: "r1", Worker: fmt.Sprintf("w%d", k), Shard: k, Shards: n}, Options{Interval: time.Millisecond, MaxRecords: 64})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.Run(ctx, send) }()
	r, res := run(t, s, loadgen.WithShard(k, n), loadgen.WithRecordSink(st))
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("worker %d: Run: %v", k, err)
	}
	if err := st.Finish(context.Background(), EndOf(r, res), send); err != nil {
		t.Fatalf("worker %d: Finish: %v", k, err)
	}
	return res
}

func receive(rcv *Receiver) SendFunc {
	return func(_ context.Context, b []byte) error {
		_, err := rcv.Receive(b)
		return err
	}
}

// Three workers stream their shards over the wire into one merged run: it
// is the run one host would have made, its verdict included.
func TestThreeWorkersAreOneRun(t *testing.T) {
	s := settings(t)
	_, single := run(t, s)
	if single.Tokens == nil || single.Tokens.ITL.Count == 0 {
		t.Fatal("the run has no inter-token gaps: the test tests none")
	}
	if single.SamplesFailed == 0 || single.SamplesFailed > 9 {
		t.Fatalf("the run failed %d samples; the test wants a few", single.SamplesFailed)
	}
	m, err := loadgen.NewMergedRun(s, loadgen.QSLCounts{Total: 1000, Performance: 256}, 3, quiet, loadgen.WithFailureClassifier(classify))
	if err != nil {
		t.Fatal(err)
	}
	rcv := NewReceiver(m, "r1", []string{"w0", "w1", "w2"}, recordwire.Limits{})
	var wg sync.WaitGroup
	for k := range 3 {
		wg.Go(func() { worker(t, s, k, 3, receive(rcv)) })
	}
	wg.Wait()
	if !rcv.Ended() {
		t.Fatal("a worker's last chunk did not arrive")
	}
	got := m.FinishMerged(rcv.End(loadgen.MergedEnd{Reason: loadgen.StopCompleted, SUTName: single.SUTName,
		Wall: single.StartTime, DurationNs: single.DurationNs}))
	// The workers' messages come in shard order, the run's in completion
	// order.
	slices.Sort(got.Errors)
	slices.Sort(single.Errors)
	got.InvalidReasons, single.InvalidReasons = nil, nil // they quote the first message
	if !reflect.DeepEqual(got, single) {
		t.Errorf("the merged run differs from the single one:\n got %+v\nwant %+v", got, single)
	}
}

// flushingSink cuts a chunk every every samples, on the run's goroutine.
type flushingSink struct {
	*Streamer
	every, n int
	send     func([]byte)
}

func (f *flushingSink) SampleDone(r loadgen.SampleRecord) {
	f.Streamer.SampleDone(r)
	if f.n++; f.n%f.every == 0 {
		f.send(f.Flush())
	}
}

// A worker killed mid-run: its chunks stop; the run is INVALID naming it.
func TestLostWorker(t *testing.T) {
	s := settings(t)
	m, err := loadgen.NewMergedRun(s, loadgen.QSLCounts{Total: 1000, Performance: 256}, 3, quiet)
	if err != nil {
		t.Fatal(err)
	}
	rcv := NewReceiver(m, "r1", []string{"w0", "w1", "w2"}, recordwire.Limits{})
	for k := range 2 {
		worker(t, s, k, 3, receive(rcv))
	}
	// Worker 2 cuts a chunk every 20 samples, in step with its run; the
	// network cuts after its second.
	st := NewStreamer(Header{RunID: "r1", Worker: "w2", Shard: 2, Shards: 3}, Options{})
	sink := &flushingSink{Streamer: st, every: 20, send: func(b []byte) {
		if c, err := recordwire.Decode(b, recordwire.Limits{}); err == nil && c.Seq < 2 {
			if _, err := rcv.Receive(b); err != nil {
				t.Errorf("worker 2's chunk %d: %v", c.Seq, err)
			}
		}
	}}
	_, _ = run(t, s, loadgen.WithShard(2, 3), loadgen.WithRecordSink(sink))
	if rcv.Ended() {
		t.Fatal("worker 2's end arrived")
	}
	res := m.FinishMerged(rcv.End(loadgen.MergedEnd{Reason: loadgen.StopCompleted, Lost: []loadgen.LostWorker{{Name: "w2", Shard: 2, AtNs: 1_500_000_000}}}))
	// Its chunks came in step with its run (each sample answered at once):
	// every query it reported issued was answered; the rest of its shard
	// is simply not in the record.
	if res.Valid || len(res.InvalidReasons) == 0 || res.InvalidReasons[0] != "worker w2 lost at 1.5 s: 0 samples unaccounted" {
		t.Fatalf("valid %v, reasons %q", res.Valid, res.InvalidReasons)
	}
}

func TestReceiverRefusesBadChunks(t *testing.T) {
	s := settings(t)
	m, err := loadgen.NewMergedRun(s, loadgen.QSLCounts{Total: 1000, Performance: 256}, 2, quiet)
	if err != nil {
		t.Fatal(err)
	}
	rcv := NewReceiver(m, "r1", []string{"w0", "w1"}, recordwire.Limits{})
	q0, _ := m.Trace().Cursor().Next()
	chunk := func(c recordwire.Chunk) []byte {
		if c.RunID == "" {
			c.RunID = "r1"
		}
		if c.Shards == 0 {
			c.Shards = 2
		}
		if c.Worker == "" {
			c.Worker = fmt.Sprintf("w%d", c.Shard)
		}
		return recordwire.Append(nil, &c)
	}
	good := chunk(recordwire.Chunk{Issues: []recordwire.Issue{{Query: 0, ScheduledNs: int64(q0.Scheduled), IssuedNs: int64(q0.Scheduled) + 10}}})
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"garbage", []byte("<html>502 Bad Gateway</html>"), "magic"},
		{"truncated", good[:len(good)-1], "truncated"},
		{"another run", chunk(recordwire.Chunk{RunID: "r0"}), `run id "r0"`},
		{"another worker's shard", chunk(recordwire.Chunk{Worker: "w1"}), "shard 0 is worker w0's"},
		{"other shards", chunk(recordwire.Chunk{Shards: 3}), "shards 3, the run has 2"},
	} {
		if _, err := rcv.Receive(tc.b); !errors.Is(err, ErrChunk) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrChunk saying %q", tc.name, err, tc.want)
		}
	}
	// None of them counted against shard 0: its chunk 0 still goes in,
	// and a resend of it is acknowledged, not applied again.
	if dup, err := rcv.Receive(good); dup || err != nil {
		t.Fatalf("shard 0's chunk 0: dup %v, %v", dup, err)
	}
	if dup, err := rcv.Receive(good); !dup || err != nil {
		t.Fatalf("shard 0's chunk 0 again: dup %v, %v; want a duplicate acknowledged", dup, err)
	}
	// Shard 1: a gap, then everything after it is refused.
	if _, err := rcv.Receive(chunk(recordwire.Chunk{Shard: 1, Seq: 1})); !errors.Is(err, ErrChunk) || !strings.Contains(err.Error(), "worker w1: chunk 1 arrived, 0 expected") {
		t.Errorf("a gap: %v", err)
	}
	if _, err := rcv.Receive(chunk(recordwire.Chunk{Shard: 1})); !errors.Is(err, ErrWorkerRefused) {
		t.Errorf("after a refused chunk: %v, want ErrWorkerRefused", err)
	}
	// Shard 0: a record the merged run refuses, named by worker and chunk.
	bad := chunk(recordwire.Chunk{Seq: 1, Samples: []recordwire.Sample{{Seq: 2, LatencyNs: 5}}})
	if _, err := rcv.Receive(bad); !errors.Is(err, ErrChunk) || !errors.Is(err, loadgen.ErrBadRecord) ||
		!strings.Contains(err.Error(), "worker w0: chunk 1: sample 0: ") || !strings.Contains(err.Error(), "not issued") {
		t.Errorf("a sample of no issued query: %v", err)
	}
}

// A worker's end: its counts, lateness and kinds, without its own count of
// unanswered samples (the merged run makes one over all workers).
func TestEndOf(t *testing.T) {
	res := &loadgen.Result{EndReason: loadgen.StopCompleted, SamplesIssued: 100, SamplesCompleted: 90, SamplesFailed: 10, Unanswered: 4, RequestsResent: 2,
		IssueLateness: loadgen.LatencyStats{MaxNs: 900, Percentiles: []loadgen.Percentile{{P: 0.5, LatencyNs: 10}, {P: 0.99, LatencyNs: 500}}},
		ClosedLoop:    &loadgen.ClosedLoop{MaxOutstanding: 7},
		Errors:        []string{"query 3 samples [0, 1): HTTP 503", "4 samples got no response before the drain timeout"},
		Failures: []loadgen.Failure{{Outcome: "error", Status: "HTTP 503", Count: 6, Example: "HTTP 503"},
			{Outcome: "unanswered", Count: 4, Example: "no response"}}}
	m, err := loadgen.NewMergedRun(settings(t), loadgen.QSLCounts{Total: 1000, Performance: 256}, 2, quiet)
	if err != nil {
		t.Fatal(err)
	}
	e := EndOf(m, res) // a run of no tokens: no gaps
	want := recordwire.End{StopReason: "completed", Issued: 100, Completed: 90, Failed: 10, Unanswered: 4, Resent: 2,
		LatenessP50Ns: 10, LatenessP99Ns: 500, LatenessMaxNs: 900, MaxOutstanding: 7,
		Messages: []string{"query 3 samples [0, 1): HTTP 503"},
		ByKind:   []recordwire.KindCount{{Kind: "error HTTP 503", Count: 6, Example: "HTTP 503"}}}
	if !reflect.DeepEqual(e, want) {
		t.Errorf("EndOf:\n got %+v\nwant %+v", e, want)
	}
	// The ends of two workers, summed and in shard order.
	e.ITL = []recordwire.Bucket{{ValueNs: 1000, Count: 3}}
	rcv := NewReceiver(m, "r1", []string{"w0", "w1"}, recordwire.Limits{})
	for k := range 2 {
		c := recordwire.Chunk{RunID: "r1", Worker: fmt.Sprintf("w%d", k), Shard: k, Shards: 2, End: &e}
		if _, err := rcv.Receive(recordwire.Append(nil, &c)); err != nil {
			t.Fatal(err)
		}
	}
	got := rcv.End(loadgen.MergedEnd{Resent: 1})
	if got.Resent != 5 || got.MaxOutstanding != 14 || len(got.Messages) != 2 || len(got.Examples) != 2 || got.Examples[0].Status != "HTTP 503" ||
		len(got.InterTokenGaps) != 2 || got.InterTokenGaps[1].Count != 3 {
		t.Errorf("merged end %+v", got)
	}
}

// A worker's end carries its answers still streaming at the drain, which
// the merged run names as such (its StreamingAtDrain).
func TestEndOfCarriesStreaming(t *testing.T) {
	m, err := loadgen.NewMergedRun(settings(t), loadgen.QSLCounts{Total: 1000, Performance: 256}, 1, quiet)
	if err != nil {
		t.Fatal(err)
	}
	res := m.FinishMerged(loadgen.MergedEnd{Reason: loadgen.StopCompleted, StreamingAtDrain: 3})
	if e := EndOf(m, res); e.Streaming != 3 {
		t.Errorf("end's streaming %d, want the run's 3", e.Streaming)
	}
}

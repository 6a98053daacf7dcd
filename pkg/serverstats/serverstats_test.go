package serverstats

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/target"
	"github.com/netloadgen/netloadgen/triton"
)

func open(t testing.TB, raw string) *Reader {
	t.Helper()
	tg, err := target.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(tg, "m", "", []kserve.Header{{Name: "X-Test", Value: "1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// Against sutproxy, on both transports: the delta over a run counts
// exactly the requests sent in it, and the summary's means add up.
func TestBeginEndAgainstSutproxy(t *testing.T) {
	p := sutproxytest.Start(t, "name=m,fn=echo,dims=4,max_batch=8,latency=constant:1ms,instances=1")
	hc, err := httpclient.New("http://" + p.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	infer := func(n int) {
		for range n {
			if _, err := hc.Infer(t.Context(), &kserve.InferRequest{Model: "m", Inputs: []kserve.Tensor{
				{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{2, 4}, Data: make([]byte, 32)}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	infer(3) // before the run: not in its delta
	for _, raw := range []string{"http://" + p.HTTPAddr(), "grpc://" + p.GRPCAddr()} {
		r := open(t, raw)
		x := Begin(t.Context(), r)
		if !x.Offered() {
			t.Fatalf("%s: not offered: %v", raw, x.beforeErr)
		}
		infer(5)
		s := x.End(t.Context(), 3e6)
		if !s.Offered || s.Note != "" || s.Requests != 5 || len(s.Delta) != 1 || s.Delta[0].InferenceCount != 10 || s.Delta[0].ExecutionCount != 5 {
			t.Fatalf("%s: statistics %+v, want 5 requests of 2 samples in 5 executions", raw, s)
		}
		if s.MeanBatchSize != 2 {
			t.Errorf("%s: mean batch size %v, want 2", raw, s.MeanBatchSize)
		}
		if s.ComputeInferNs != 1e6 {
			t.Errorf("%s: compute_infer %v ns, want the model's constant 1 ms", raw, s.ComputeInferNs)
		}
		if sum := s.ComputeInputNs + s.QueueNs + s.ComputeInferNs + s.ComputeOutputNs; sum != s.RequestNs {
			t.Errorf("%s: request_ns %v != input+queue+infer+output %v", raw, s.RequestNs, sum)
		}
		if s.ClientOverheadNs != 3e6-s.RequestNs {
			t.Errorf("%s: client_overhead_ns %v, want 3e6 − %v", raw, s.ClientOverheadNs, s.RequestNs)
		}
	}
}

// An endpoint without the extension: HTTP 404 or 501, gRPC UNIMPLEMENTED.
// The result is one line; there is no live figure.
func TestNotOffered(t *testing.T) {
	for _, status := range []string{"404 Not Found", "501 Not Implemented", "405 Method Not Allowed"} {
		addr := serveRaw(t, func(c net.Conn) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 " + status + "\r\nContent-Length: 9\r\n\r\nnot here\n"))
		})
		x := Begin(t.Context(), open(t, "http://"+addr))
		if x.Offered() || !NotOffered(x.beforeErr) {
			t.Errorf("HTTP %s: offered %v, err %v", status, x.Offered(), x.beforeErr)
		}
		stop := x.Live(t.Context(), time.Millisecond, func(Live) { t.Error("a live figure with no extension") })
		stop()
		if s := x.End(t.Context(), 1); s.Offered || s.Note != "not offered" || s.Requests != 0 || s.Delta != nil {
			t.Errorf("HTTP %s: %+v, want only the note", status, s)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	inferencepb.RegisterGRPCInferenceServiceServer(gs, inferencepb.UnimplementedGRPCInferenceServiceServer{})
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	x := Begin(t.Context(), open(t, "grpc://"+ln.Addr().String()))
	if !errors.Is(x.beforeErr, kserve.ErrUnimplemented) {
		t.Fatalf("gRPC: %v, want UNIMPLEMENTED", x.beforeErr)
	}
	if s := x.End(t.Context(), 1); s.Offered || s.Note != "not offered" {
		t.Errorf("gRPC: %+v", s)
	}
}

// A fake source: call k answers k·10 requests that waited 100 ns each,
// or blocks on its gate.
type fakeSource struct {
	calls int
	block func(call int) bool
}

func (f *fakeSource) ModelStatistics(ctx context.Context, _, _ string) (triton.StatisticsResponse, error) {
	f.calls++
	if f.block != nil && f.block(f.calls) {
		<-ctx.Done()
		return triton.StatisticsResponse{}, ctx.Err()
	}
	n := uint64(f.calls * 10)
	return triton.StatisticsResponse{ModelStats: []triton.ModelStatistics{{Name: "m", Version: "1", InferenceCount: n, ExecutionCount: n,
		InferenceStats: triton.InferStatistics{Success: triton.Duration{Count: n, NS: n * 1000}, Queue: triton.Duration{Count: n, NS: n * n}}}}}, nil
}

func TestLive(t *testing.T) {
	src := &fakeSource{}
	x := Begin(t.Context(), New(src, "m", "", time.Second))
	got := make(chan Live, 16)
	stop := x.Live(t.Context(), time.Millisecond, func(l Live) { got <- l })
	first, second := <-got, <-got
	stop()
	// Call 1 (before): 10 requests, 100 ns queue in all. Call 2: 20, 400.
	// Call 3: 30, 900.
	if first.Requests != 10 || first.QueueNs != 30 || first.RunRequests != 10 || first.RunQueueNs != 30 {
		t.Errorf("first live figure %+v, want 10 requests of 30 ns", first)
	}
	if second.Requests != 10 || second.QueueNs != 50 || second.RunRequests != 20 || second.RunQueueNs != 40 {
		t.Errorf("second live figure %+v, want the interval's 10 requests of 50 ns, the run's 20 of 40", second)
	}
	calls := src.calls
	select {
	case l := <-got:
		_ = l // one may have been reported before stop: nothing after
	default:
	}
	if src.calls != calls {
		t.Error("reads after stop")
	}
}

// A live read slower than the interval skips the ticks it outlasted, and
// stop cancels it at once rather than waiting out its timeout.
func TestLiveSlowReadSkipped(t *testing.T) {
	src := &fakeSource{block: func(call int) bool { return call == 2 }}
	x := Begin(t.Context(), New(src, "m", "", 50*time.Millisecond))
	got := make(chan Live, 16)
	stop := x.Live(t.Context(), time.Millisecond, func(l Live) { got <- l })
	l := <-got // after the blocked read timed out
	stop()
	if x.Skipped() < 1 {
		t.Errorf("skipped %d, want the ticks of a 50 ms read at 1 ms", x.Skipped())
	}
	if l.RunRequests != 20 {
		t.Errorf("live %+v: want call 3's 20 requests since the start", l)
	}

	entered := make(chan struct{}, 1)
	blocked := &fakeSource{block: func(call int) bool {
		if call > 1 {
			entered <- struct{}{}
		}
		return call > 1
	}}
	x = Begin(t.Context(), New(blocked, "m", "", time.Hour))
	stop = x.Live(t.Context(), time.Millisecond, func(Live) {})
	<-entered // a live read is blocked
	done := make(chan struct{})
	go func() { stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("stop waited for a read with an hour's timeout")
	}
}

func TestEndAfterReadFails(t *testing.T) {
	src := &fakeSource{block: func(call int) bool { return call == 2 }}
	x := Begin(t.Context(), New(src, "m", "", 20*time.Millisecond))
	s := x.End(t.Context(), 1)
	if !s.Offered || !strings.Contains(s.Note, "after the run") || !strings.Contains(s.Note, "deadline") {
		t.Errorf("%+v: want offered, the note naming the read after and its timeout", s)
	}
	src = &fakeSource{block: func(call int) bool { return call == 1 }}
	s = Begin(t.Context(), New(src, "m", "", 20*time.Millisecond)).End(t.Context(), 1)
	if s.Offered || !strings.Contains(s.Note, "before the run") || src.calls != 1 {
		t.Errorf("%+v after %d reads: want the note naming the read before, no read after", s, src.calls)
	}
}

func TestConvertBounds(t *testing.T) {
	big := triton.StatisticsResponse{ModelStats: make([]triton.ModelStatistics, maxModels+1)}
	if _, err := Convert(big); !errors.Is(err, ErrTooMany) {
		t.Errorf("%d models: %v", maxModels+1, err)
	}
	many := triton.StatisticsResponse{ModelStats: []triton.ModelStatistics{{Name: "m", BatchStats: make([]triton.BatchStatistics, maxBatchSizes+1)}}}
	if _, err := Convert(many); !errors.Is(err, ErrTooMany) {
		t.Errorf("%d batch sizes: %v", maxBatchSizes+1, err)
	}
	ok := triton.StatisticsResponse{ModelStats: []triton.ModelStatistics{{Name: "m", Version: "2", InferenceCount: 7, LastInference: 99,
		InferenceStats: triton.InferStatistics{CacheHit: triton.Duration{Count: 1, NS: 2}},
		BatchStats:     []triton.BatchStatistics{{BatchSize: 4, ComputeInfer: triton.Duration{Count: 3, NS: 5}}}}}}
	got, err := Convert(ok)
	if err != nil || len(got) != 1 || got[0].InferenceCount != 7 || got[0].InferenceStats.CacheHit.NS != 2 || got[0].BatchStats[0].ComputeInfer.NS != 5 {
		t.Errorf("Convert = %+v, %v", got, err)
	}
}

// A note's error text is scrubbed before it is cut: a secret the server
// echoed across the cut leaves none of itself in the note.
func TestNoteScrubbedBeforeItIsCut(t *testing.T) {
	secret := strings.Repeat("s", 40)
	src := failing{err: errors.New(strings.Repeat("x", maxNote-10) + secret)}
	x := Begin(t.Context(), New(src, "m", "", time.Second))
	x.Scrub = func(s string) string { return strings.ReplaceAll(s, secret, "<redacted>") }
	st := x.End(t.Context(), 1)
	if strings.Contains(st.Note, "ssss") {
		t.Errorf("note keeps part of the secret: %q", st.Note)
	}
}

// failing is a source whose every read fails with err.
type failing struct{ err error }

func (f failing) ModelStatistics(context.Context, string, string) (triton.StatisticsResponse, error) {
	return triton.StatisticsResponse{}, f.err
}

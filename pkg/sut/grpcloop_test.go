//go:build linux

package sut

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// grpcLibrary is 64 samples for sutproxy's model "m" (INPUT0, FP32, 4
// values per sample, batched).
func grpcLibrary(t *testing.T) *qsl.Synthetic {
	t.Helper()
	lib, err := qsl.NewSynthetic(kserve.ModelMetadata{Name: "m", Inputs: []kserve.TensorMetadata{
		{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 4}}}}, qsl.SyntheticOptions{Batched: true, Total: 64, Performance: 64, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, 64)
	for i := range all {
		all[i] = i
	}
	if err := lib.Load(t.Context(), all); err != nil {
		t.Fatal(err)
	}
	return lib
}

func newGRPCLoopSUT(t *testing.T, o Options) *GRPCLoop {
	t.Helper()
	p := sutproxytest.Start(t, "name=m,dims=4,max_batch=8")
	l, err := NewGRPCLoop(grpcLibrary(t), o, GRPCLoopOptions{Addr: p.GRPCAddr(), Conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// pollGRPC polls until c has every sample, bounded by ten seconds.
func pollGRPC(t *testing.T, l *GRPCLoop, c *collector) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		select {
		case <-c.all:
			return
		default:
		}
		if ctx.Err() != nil {
			t.Fatalf("%d of %d samples answered after 10 s", c.count, c.want)
		}
		l.PollUntil(ctx, time.Now().Add(time.Second))
	}
}

func TestGRPCLoopOfflineSplitRespectsInflightCap(t *testing.T) {
	l := newGRPCLoopSUT(t, Options{Model: "m", MaxBatch: 8, BatchSize: 4, MaxInflight: 3})
	samples := make([]int, 50)
	for i := range samples {
		samples[i] = i % 64
	}
	c := newCollector(50)
	most := 0
	done := func(x loadgen.Completion) {
		most = max(most, l.loop.Outstanding()+1) // this call's own request has just ended
		c.done(x)
	}
	l.IssueQuery(t.Context(), loadgen.Query{Samples: samples}, done)
	pollGRPC(t, l, c)
	if most > 3 {
		t.Errorf("%d calls outstanding at once, cap is 3", most)
	}
	sort.Slice(c.got, func(i, j int) bool { return c.got[i].First < c.got[j].First })
	next := 0
	for _, g := range c.got {
		if g.First != next || g.Count > 4 || g.Err != nil || g.At.IsZero() {
			t.Fatalf("completions %+v do not tile the query in timed batches of at most 4", c.got)
		}
		next += g.Count
	}
	if len(c.got) != 13 {
		t.Errorf("%d calls, want 13 (12 of 4, one of 2)", len(c.got))
	}
}

func TestGRPCLoopServerErrorsReachTheEngine(t *testing.T) {
	l := newGRPCLoopSUT(t, Options{Model: "nope", MaxBatch: 8})
	c := newCollector(1)
	l.IssueQuery(t.Context(), loadgen.Query{Samples: []int{1}}, c.done)
	pollGRPC(t, l, c)
	if !errors.Is(c.got[0].Err, kserve.ErrNotFound) {
		t.Fatalf("error %v, want kserve.ErrNotFound", c.got[0].Err)
	}
}

func TestGRPCLoopRefusesCapture(t *testing.T) {
	if _, err := NewGRPCLoop(grpcLibrary(t), Options{Model: "m", Capture: true}, GRPCLoopOptions{Addr: "127.0.0.1:1"}); err == nil {
		t.Fatal("a capturing gRPC loop SUT was built")
	}
}

// The engine runs a Server scenario through the gRPC loop: every query is
// answered, through PollUntil.
func TestGRPCLoopServerRunThroughTheEngine(t *testing.T) {
	l := newGRPCLoopSUT(t, Options{Model: "m", MaxBatch: 8, WholeQueries: true})
	res := runServer(t, l, &grpcLoopQSL{lib: grpcLibrary(t), sut: l}, 100, 50)
	if res.QueriesIssued < 50 || res.QueriesCompleted != res.QueriesIssued || res.SamplesFailed != 0 {
		t.Fatalf("issued %d, completed %d, failed %d: %v", res.QueriesIssued, res.QueriesCompleted, res.SamplesFailed, res.Errors)
	}
}

type grpcLoopQSL struct {
	lib *qsl.Synthetic
	sut *GRPCLoop
	tr  *trace.Trace
}

func (q *grpcLoopQSL) setTrace(tr *trace.Trace)    { q.tr = tr }
func (q *grpcLoopQSL) TotalSampleCount() int       { return q.lib.TotalSampleCount() }
func (q *grpcLoopQSL) PerformanceSampleCount() int { return q.lib.PerformanceSampleCount() }
func (q *grpcLoopQSL) Load(ctx context.Context, idx []int) error {
	if err := q.lib.Load(ctx, idx); err != nil {
		return err
	}
	if err := q.sut.Prepare(ctx, q.tr); err != nil {
		return err
	}
	return q.sut.Preconnect(ctx, 2)
}

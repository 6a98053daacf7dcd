//go:build linux

package grpcloop

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// inferRequest encodes a request of one FP32 sample of n values to model.
func inferRequest(t *testing.T, addr, model string, n int, timeout time.Duration) *Request {
	t.Helper()
	msg, err := kserve.MarshalGRPCInfer(&kserve.InferRequest{Model: model, Inputs: []kserve.Tensor{{
		Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, int64(n)}, Data: make([]byte, 4*n)}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRequest(ModelInferPath, addr, timeout, msg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRealServer(t *testing.T) {
	p := sutproxytest.Start(t, "name=m,dims=16", "name=big,dims=200000")
	addr := p.GRPCAddr()
	h := newHarness(t, Config{Addr: addr, Conns: 2, Timeout: 10 * time.Second})
	if err := h.l.Preconnect(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	ok := inferRequest(t, addr, "m", 16, 10*time.Second)
	unknown := inferRequest(t, addr, "nope", 16, 0)
	wrongShape := inferRequest(t, addr, "m", 17, 0)
	// 800 kB: more than the server's initial stream and connection
	// windows (64 KiB), so it goes out as WINDOW_UPDATEs allow; the echo
	// comes back in many DATA frames.
	big := inferRequest(t, addr, "big", 200000, 0)
	for i := range 100 {
		h.l.Send(ok, uint64(i))
	}
	h.l.Send(unknown, 1000)
	h.l.Send(wrongShape, 1001)
	h.l.Send(big, 1002)
	h.l.Send(big, 1003)
	h.drain()
	for i := range 100 {
		if o := h.done[uint64(i)]; o.err != nil || o.at.IsZero() {
			t.Fatalf("call %d: %+v", i, o)
		}
	}
	if err := h.done[1000].err; !errors.Is(err, kserve.ErrNotFound) {
		t.Errorf("unknown model: %v, want NOT_FOUND", err)
	}
	if err := h.done[1001].err; !errors.Is(err, kserve.ErrInvalidArgument) {
		t.Errorf("wrong shape: %v, want INVALID_ARGUMENT", err)
	}
	for _, tag := range []uint64{1002, 1003} {
		if err := h.done[tag].err; err != nil {
			t.Errorf("large request %d: %v", tag, err)
		}
	}
	if h.l.Retries() != 0 || h.l.Conns() != 2 {
		t.Errorf("retries %d, connections %d; want 0 and 2", h.l.Retries(), h.l.Conns())
	}
}

// grpcServer serves sim models with grpc-go options; inFlight records the
// most calls it ran at once.
type grpcServer struct {
	gs       *grpc.Server
	addr     string
	cur, max atomic.Int64
}

func startGRPC(t *testing.T, model string, opts ...grpc.ServerOption) *grpcServer {
	t.Helper()
	spec, err := sim.ParseModelFlag(model)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sim.New([]sim.ModelSpec{spec})
	if err != nil {
		t.Fatal(err)
	}
	s := &grpcServer{}
	count := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		n := s.cur.Add(1)
		defer s.cur.Add(-1)
		for m := s.max.Load(); n > m && !s.max.CompareAndSwap(m, n); m = s.max.Load() {
		}
		return h(ctx, req)
	}
	s.gs = server.NewGRPCServer(b, append(opts, grpc.ChainUnaryInterceptor(count))...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.gs.Serve(ln) })
	t.Cleanup(func() { s.gs.Stop(); wg.Wait() })
	return s
}

func TestMaxConcurrentStreamsIsRespected(t *testing.T) {
	// A server that runs 16 calls at once but allows 2 streams per
	// connection: a client that ignored the limit would have streams
	// refused (and retried or failed).
	s := startGRPC(t, "name=m,dims=16,latency=constant:1ms,instances=16", grpc.MaxConcurrentStreams(2))
	h := newHarness(t, Config{Addr: s.addr, Conns: 1})
	if err := h.l.Preconnect(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	req := inferRequest(t, s.addr, "m", 16, 0)
	for i := range 40 {
		h.l.Send(req, uint64(i))
	}
	if h.l.Outstanding() != 40 {
		t.Fatalf("%d outstanding, want 40", h.l.Outstanding())
	}
	h.drain()
	for i := range 40 {
		if err := h.done[uint64(i)].err; err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if m := s.max.Load(); m != 2 || h.l.Retries() != 0 {
		t.Errorf("server ran up to %d calls at once, retries %d; want 2 and 0", m, h.l.Retries())
	}
}

func TestGracefulStopFinishesCallsInFlight(t *testing.T) {
	s := startGRPC(t, "name=m,dims=16,latency=constant:200ms,instances=8")
	h := newHarness(t, Config{Addr: s.addr, Conns: 1})
	if err := h.l.Preconnect(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	req := inferRequest(t, s.addr, "m", 16, 0)
	for i := range 4 {
		h.l.Send(req, uint64(i))
	}
	// Wait until the server runs them, then stop it gracefully: GOAWAY,
	// the calls in flight finish, the connection closes.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for s.cur.Load() < 4 && ctx.Err() == nil {
		h.l.PollUntil(ctx, time.Now().Add(time.Millisecond))
	}
	stopped := make(chan struct{})
	go func() { s.gs.GracefulStop(); close(stopped) }()
	h.drain()
	for i := range 4 {
		if err := h.done[uint64(i)].err; err != nil {
			t.Errorf("call %d in flight at GOAWAY: %v", i, err)
		}
	}
	<-stopped
	// The server is gone: a new call fails rather than hangs.
	h.l.Send(req, 99)
	h.drain()
	if err := h.done[99].err; !errors.Is(err, kserve.ErrTransport) {
		t.Errorf("call after the server stopped: %v, want a transport error", err)
	}
}

func TestStopMidRunFailsCallsCleanly(t *testing.T) {
	s := startGRPC(t, "name=m,dims=16,latency=constant:1s,instances=8")
	h := newHarness(t, Config{Addr: s.addr, Conns: 2})
	req := inferRequest(t, s.addr, "m", 16, 0)
	for i := range 8 {
		h.l.Send(req, uint64(i))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for s.cur.Load() < 8 && ctx.Err() == nil {
		h.l.PollUntil(ctx, time.Now().Add(time.Millisecond))
	}
	s.gs.Stop()
	h.drain()
	for i := range 8 {
		if err := h.done[uint64(i)].err; !errors.Is(err, kserve.ErrTransport) {
			t.Errorf("call %d: %v, want a transport error", i, err)
		}
	}
}

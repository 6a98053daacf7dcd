package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/triton"
)

// grpcFake is a Backend with a few models:
//   - "echo" answers every input as an output named OUT_<input>, and refuses
//     a first dimension other than 1 (a model-level shape check);
//   - "busy" answers UNAVAILABLE, as Triton does when its queue is full;
//   - "broken" fails with a plain error;
//   - "slow" blocks until its context ends.
//
// It records the peers of Infer calls, to see the client's pool at work.
type grpcFake struct {
	mu    sync.Mutex
	peers map[string]int
}

func (f *grpcFake) ServerLive(context.Context) bool  { return true }
func (f *grpcFake) ServerReady(context.Context) bool { return true }
func (f *grpcFake) ServerMetadata(context.Context) kserve.ServerMetadata {
	return kserve.ServerMetadata{Name: "fake", Version: "0.1", Extensions: []string{kserve.ExtStatistics, kserve.ExtModelConfiguration}}
}

func (f *grpcFake) known(model string) error {
	switch model {
	case "echo", "busy", "broken", "slow":
		return nil
	}
	return kserve.Errorf(codes.NotFound, "unknown model %q", model)
}

func (f *grpcFake) ModelReady(_ context.Context, model, _ string) (bool, error) {
	return model == "echo", f.known(model)
}

func (f *grpcFake) ModelMetadata(_ context.Context, model, _ string) (kserve.ModelMetadata, error) {
	if err := f.known(model); err != nil {
		return kserve.ModelMetadata{}, err
	}
	return kserve.ModelMetadata{Name: model, Versions: []string{"1"}, Platform: "fake",
		Inputs:  []kserve.TensorMetadata{{Name: "X", Datatype: kserve.FP32, Shape: []int64{1, 16}}},
		Outputs: []kserve.TensorMetadata{{Name: "OUT_X", Datatype: kserve.FP32, Shape: []int64{1, 16}}}}, nil
}

func (f *grpcFake) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	if p, ok := peer.FromContext(ctx); ok {
		f.mu.Lock()
		if f.peers == nil {
			f.peers = map[string]int{}
		}
		f.peers[p.Addr.String()]++
		f.mu.Unlock()
	}
	switch req.Model {
	case "busy":
		return nil, kserve.Errorf(codes.Unavailable, "queue full")
	case "broken":
		return nil, errors.New("backend bug")
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	case "echo":
		resp := &kserve.InferResponse{Model: req.Model, Version: "1", ID: req.ID}
		for _, in := range req.Inputs {
			if len(in.Shape) == 0 || in.Shape[0] != 1 {
				return nil, kserve.Errorf(codes.InvalidArgument, "input %s: batch size must be 1, got shape %v", in.Name, in.Shape)
			}
			resp.Outputs = append(resp.Outputs, kserve.Tensor{Name: "OUT_" + in.Name, Datatype: in.Datatype, Shape: in.Shape, Data: in.Data})
		}
		return resp, nil
	}
	return nil, f.known(req.Model)
}

func (f *grpcFake) ModelConfig(_ context.Context, model, _ string) (triton.ModelConfig, error) {
	if err := f.known(model); err != nil {
		return triton.ModelConfig{}, err
	}
	return triton.ModelConfig{Name: model, MaxBatchSize: 8,
		Input:         []triton.ModelInput{{Name: "X", DataType: "TYPE_FP32", Format: "FORMAT_NONE", Dims: []int64{16}}},
		Output:        []triton.ModelOutput{{Name: "OUT_X", DataType: "TYPE_FP32", Dims: []int64{16}}},
		InstanceGroup: []triton.InstanceGroup{{Name: "g", Count: 2, Kind: "KIND_CPU"}},
	}, nil
}

func (f *grpcFake) ModelStatistics(_ context.Context, model, _ string) (triton.StatisticsResponse, error) {
	st := func(name string) triton.ModelStatistics {
		return triton.ModelStatistics{Name: name, Version: "1", InferenceCount: 3, ExecutionCount: 2,
			InferenceStats: triton.InferStatistics{Success: triton.Duration{Count: 3, NS: 300}},
			BatchStats:     []triton.BatchStatistics{}}
	}
	if model == "" {
		return triton.StatisticsResponse{ModelStats: []triton.ModelStatistics{st("echo"), st("slow")}}, nil
	}
	if err := f.known(model); err != nil {
		return triton.StatisticsResponse{}, err
	}
	return triton.StatisticsResponse{ModelStats: []triton.ModelStatistics{st(model)}}, nil
}

// grpcCountingListener counts accepted connections.
type grpcCountingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *grpcCountingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// grpcServe starts srv on a loopback port and returns its address and listener.
func grpcServe(t testing.TB, srv *grpc.Server) (string, *grpcCountingListener) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &grpcCountingListener{Listener: l}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(cl) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return l.Addr().String(), cl
}

func grpcClient(t testing.TB, addr string, opts ...grpcclient.Option) *grpcclient.Client {
	t.Helper()
	c, err := grpcclient.New(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func grpcFP32(vals ...float32) []byte {
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func grpcEchoRequest(id string) *kserve.InferRequest {
	vals := make([]float32, 16)
	for i := range vals {
		vals[i] = float32(i) * 0.5
	}
	return &kserve.InferRequest{Model: "echo", ID: id, Inputs: []kserve.Tensor{
		{Name: "X", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: grpcFP32(vals...)},
	}}
}

func TestGRPCUnaryCalls(t *testing.T) {
	addr, _ := grpcServe(t, server.NewGRPCServer(&grpcFake{}))
	c := grpcClient(t, addr)
	ctx := t.Context()

	if live, err := c.ServerLive(ctx); err != nil || !live {
		t.Errorf("ServerLive = %v, %v", live, err)
	}
	if ready, err := c.ServerReady(ctx); err != nil || !ready {
		t.Errorf("ServerReady = %v, %v", ready, err)
	}
	if sm, err := c.ServerMetadata(ctx); err != nil || sm.Name != "fake" || !slices.Contains(sm.Extensions, kserve.ExtStatistics) {
		t.Errorf("ServerMetadata = %+v, %v", sm, err)
	}
	if ready, err := c.ModelReady(ctx, "echo", ""); err != nil || !ready {
		t.Errorf("ModelReady(echo) = %v, %v", ready, err)
	}
	if ready, err := c.ModelReady(ctx, "slow", "1"); err != nil || ready {
		t.Errorf("ModelReady(slow) = %v, %v", ready, err)
	}
	if md, err := c.ModelMetadata(ctx, "echo", ""); err != nil || md.Name != "echo" || len(md.Inputs) != 1 || md.Inputs[0].Shape[1] != 16 {
		t.Errorf("ModelMetadata = %+v, %v", md, err)
	}
	if cfg, err := c.ModelConfig(ctx, "echo", ""); err != nil || cfg.MaxBatchSize != 8 || cfg.InstanceGroup[0].Kind != "KIND_CPU" || cfg.Input[0].DataType != "TYPE_FP32" {
		t.Errorf("ModelConfig = %+v, %v", cfg, err)
	}
	all, err := c.ModelStatistics(ctx, "", "")
	if err != nil || len(all.ModelStats) != 2 {
		t.Errorf("ModelStatistics(all) = %+v, %v", all, err)
	}
	one, err := c.ModelStatistics(ctx, "echo", "")
	if err != nil || len(one.ModelStats) != 1 || one.ModelStats[0].InferenceStats.Success.NS != 300 {
		t.Errorf("ModelStatistics(echo) = %+v, %v", one, err)
	}

	req := grpcEchoRequest("id-1")
	resp, err := c.Infer(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "echo" || resp.ID != "id-1" || len(resp.Outputs) != 1 || resp.Outputs[0].Name != "OUT_X" ||
		!bytes.Equal(resp.Outputs[0].Data, req.Inputs[0].Data) {
		t.Errorf("Infer = %+v", resp)
	}
	p, err := c.PrepareInfer(req)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a prepared request is reusable
		resp, err := c.InferPrepared(ctx, p)
		if err != nil || !bytes.Equal(resp.Outputs[0].Data, req.Inputs[0].Data) {
			t.Fatalf("InferPrepared = %+v, %v", resp, err)
		}
		if err := c.InferPreparedDiscard(ctx, p); err != nil {
			t.Fatalf("InferPreparedDiscard: %v", err)
		}
	}
}

// Every datatype crosses client and server intact, on the raw path.
func TestGRPCInferEveryDatatype(t *testing.T) {
	addr, _ := grpcServe(t, server.NewGRPCServer(&grpcFake{}))
	c := grpcClient(t, addr, grpcclient.WithConns(1))
	for _, dt := range kserve.DataTypes {
		t.Run(string(dt), func(t *testing.T) {
			var data []byte
			if dt == kserve.Bytes {
				for _, s := range []string{"", "abc", "\x00"} {
					data = binary.LittleEndian.AppendUint32(data, uint32(len(s)))
					data = append(data, s...)
				}
			} else {
				for i := range 3 * dt.Size() {
					data = append(data, byte(0x80+i))
				}
			}
			req := &kserve.InferRequest{Model: "echo", Inputs: []kserve.Tensor{{Name: "T", Datatype: dt, Shape: []int64{1, 3}, Data: data}}}
			resp, err := c.Infer(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			o := resp.Outputs[0]
			if o.Datatype != dt || !slices.Equal(o.Shape, []int64{1, 3}) || !bytes.Equal(o.Data, data) {
				t.Errorf("got %+v, want %s [1 3] % x", o, dt, data)
			}
		})
	}
}

func TestGRPCErrors(t *testing.T) {
	addr, _ := grpcServe(t, server.NewGRPCServer(&grpcFake{}))
	c := grpcClient(t, addr)
	badShape := grpcEchoRequest("x")
	badShape.Inputs[0].Shape = []int64{2, 8}
	unknown := grpcEchoRequest("x")
	unknown.Model = "nope"
	busy := grpcEchoRequest("x")
	busy.Model = "busy"
	broken := grpcEchoRequest("x")
	broken.Model = "broken"

	tests := []struct {
		name string
		call func(ctx context.Context) error
		want error
	}{
		{"unknown model infer", func(ctx context.Context) error { _, err := c.Infer(ctx, unknown); return err }, kserve.ErrNotFound},
		{"unknown model metadata", func(ctx context.Context) error { _, err := c.ModelMetadata(ctx, "nope", ""); return err }, kserve.ErrNotFound},
		{"unknown model config", func(ctx context.Context) error { _, err := c.ModelConfig(ctx, "nope", ""); return err }, kserve.ErrNotFound},
		{"unknown model stats", func(ctx context.Context) error { _, err := c.ModelStatistics(ctx, "nope", ""); return err }, kserve.ErrNotFound},
		{"wrong shape", func(ctx context.Context) error { _, err := c.Infer(ctx, badShape); return err }, kserve.ErrInvalidArgument},
		{"server unavailable status", func(ctx context.Context) error { _, err := c.Infer(ctx, busy); return err }, kserve.ErrUnavailable},
		{"plain backend error", func(ctx context.Context) error { _, err := c.Infer(ctx, broken); return err }, kserve.ErrInternal},
	}
	// As Triton does, ModelReady answers OK with ready=false for a model it
	// does not know (tritonclient's is_model_ready depends on it).
	if ready, err := c.ModelReady(t.Context(), "nope", ""); ready || err != nil {
		t.Errorf("ModelReady(unknown) = %v, %v; want false, nil", ready, err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(t.Context())
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			// The server answered: never a transport error, and an *Error from gRPC.
			var ke *kserve.Error
			if errors.Is(err, kserve.ErrTransport) || !errors.As(err, &ke) || ke.HTTPStatus != 0 || ke.Message == "" {
				t.Errorf("err = %#v: want a plain *kserve.Error with HTTPStatus 0", err)
			}
		})
	}
}

// Malformed tensor data is refused by the server itself, before the Backend.
func TestGRPCServerRejectsMalformedTensors(t *testing.T) {
	addr, _ := grpcServe(t, server.NewGRPCServer(&grpcFake{}))
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	pc := inferencepb.NewGRPCInferenceServiceClient(cc)
	in := []*inferencepb.ModelInferRequest_InferInputTensor{{Name: "X", Datatype: "FP32", Shape: []int64{1, 16}}}
	tests := map[string]*inferencepb.ModelInferRequest{
		"short raw": {ModelName: "echo", Inputs: in, RawInputContents: [][]byte{make([]byte, 60)}},
		"mixed": {ModelName: "echo", RawInputContents: [][]byte{make([]byte, 64)}, Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
			{Name: "X", Datatype: "FP32", Shape: []int64{1, 16}, Contents: &inferencepb.InferTensorContents{Fp32Contents: make([]float32, 16)}}}},
		"no data": {ModelName: "echo", Inputs: in},
	}
	for name, m := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := pc.ModelInfer(t.Context(), m)
			if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "'X'") {
				t.Errorf("status = %v, want InvalidArgument naming X", st)
			}
		})
	}
}

func TestGRPCTransportErrors(t *testing.T) {
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	t.Run("refused", func(t *testing.T) {
		c := grpcClient(t, closed, grpcclient.WithConns(1))
		_, err := c.ServerLive(t.Context())
		if !errors.Is(err, kserve.ErrTransport) || !errors.Is(err, kserve.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrTransport and ErrUnavailable", err)
		}
	})
	t.Run("eager connect refused", func(t *testing.T) {
		_, err := grpcclient.New(closed, grpcclient.WithEagerConnect(10*time.Second))
		if !errors.Is(err, kserve.ErrTransport) {
			t.Fatalf("err = %v, want ErrTransport", err)
		}
	})
	t.Run("stopped server", func(t *testing.T) {
		srv := server.NewGRPCServer(&grpcFake{})
		addr, _ := grpcServe(t, srv)
		c := grpcClient(t, addr, grpcclient.WithConns(1), grpcclient.WithEagerConnect(10*time.Second))
		if _, err := c.Infer(t.Context(), grpcEchoRequest("a")); err != nil {
			t.Fatal(err)
		}
		srv.Stop()
		_, err := c.Infer(t.Context(), grpcEchoRequest("b"))
		if !errors.Is(err, kserve.ErrTransport) {
			t.Fatalf("err = %v, want ErrTransport", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		addr, _ := grpcServe(t, server.NewGRPCServer(&grpcFake{}))
		c := grpcClient(t, addr)
		req := grpcEchoRequest("s")
		req.Model = "slow" // blocks until the deadline reaches the server
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		_, err := c.Infer(ctx, req)
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kserve.ErrTransport) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
	})
}

func TestGRPCPool(t *testing.T) {
	fake := &grpcFake{}
	addr, lis := grpcServe(t, server.NewGRPCServer(fake))
	c := grpcClient(t, addr, grpcclient.WithConns(3), grpcclient.WithEagerConnect(10*time.Second))
	// Eager: every connection is open before the first call.
	if n := lis.accepted.Load(); n != 3 {
		t.Fatalf("%d connections accepted after grpcclient.New, want 3", n)
	}
	for i := range 6 {
		if _, err := c.Infer(t.Context(), grpcEchoRequest(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.peers) != 3 {
		t.Fatalf("calls came from %d connections (%v), want 3", len(fake.peers), fake.peers)
	}
	for p, n := range fake.peers {
		if n != 2 {
			t.Errorf("connection %s carried %d calls, want 2 (round robin)", p, n)
		}
	}
	if _, err := grpcclient.New(addr, grpcclient.WithConns(0)); err == nil {
		t.Error("a pool of 0 connections was accepted")
	}
}

func TestGRPCStreamInfer(t *testing.T) {
	addr, _ := grpcServe(t, server.NewGRPCServer(&grpcFake{}))
	c := grpcClient(t, addr)
	st, err := c.StreamInfer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	good := grpcEchoRequest("good")
	bad := grpcEchoRequest("bad")
	bad.Model = "nope"
	if err := st.Send(good); err != nil {
		t.Fatal(err)
	}
	p, err := c.PrepareInfer(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendPrepared(p); err != nil {
		t.Fatal(err)
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	got := map[string]error{}
	for range 2 {
		resp, err := st.Recv()
		if resp == nil {
			t.Fatalf("Recv: no response, err %v", err)
		}
		got[resp.ID] = err
		if resp.ID == "good" && (err != nil || !bytes.Equal(resp.Outputs[0].Data, good.Inputs[0].Data)) {
			t.Errorf("good: %+v, %v", resp, err)
		}
	}
	var ke *kserve.Error
	if err := got["bad"]; !errors.As(err, &ke) || !strings.Contains(ke.Message, "unknown model") {
		t.Errorf("bad: err = %v, want the server's error message", err)
	}
	if _, ok := got["good"]; !ok {
		t.Errorf("no response for good: %v", got)
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Errorf("after both responses: %v, want io.EOF", err)
	}
}

func TestGRPCHealthAndReflection(t *testing.T) {
	addr, _ := grpcServe(t, server.NewGRPCServer(&grpcFake{}))
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()

	hc := healthpb.NewHealthClient(cc)
	for _, svc := range []string{"", "inference.GRPCInferenceService"} {
		r, err := hc.Check(t.Context(), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health %q = %v, %v", svc, r, err)
		}
	}

	rs, err := reflectionpb.NewServerReflectionClient(cc).ServerReflectionInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	r, err := rs.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	if !slices.Contains(names, "inference.GRPCInferenceService") || !slices.Contains(names, "grpc.health.v1.Health") {
		t.Errorf("services = %v", names)
	}
	// grpcurl also needs the file describing the service.
	if err := rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{
		FileContainingSymbol: "inference.GRPCInferenceService"}}); err != nil {
		t.Fatal(err)
	}
	if r, err = rs.Recv(); err != nil || len(r.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Errorf("file containing the service: %v, %v", r, err)
	}
}

type grpcObserved struct {
	method, model string
	code          codes.Code
}

func TestGRPCObserver(t *testing.T) {
	var mu sync.Mutex
	var seen []grpcObserved
	obs := func(method, model string, code codes.Code, d time.Duration) {
		if d < 0 {
			t.Errorf("negative duration %v", d)
		}
		mu.Lock()
		seen = append(seen, grpcObserved{method, model, code})
		mu.Unlock()
	}
	addr, _ := grpcServe(t, server.NewObservedGRPCServer(&grpcFake{}, obs))
	c := grpcClient(t, addr)
	ctx := t.Context()
	_, _ = c.Infer(ctx, grpcEchoRequest("a"))
	unknown := grpcEchoRequest("b")
	unknown.Model = "nope"
	_, _ = c.Infer(ctx, unknown)
	_, _ = c.ServerLive(ctx)
	st, err := c.StreamInfer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Send(grpcEchoRequest("c")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	want := []grpcObserved{
		{"ModelInfer", "echo", codes.OK},
		{"ModelInfer", "nope", codes.NotFound},
		{"ServerLive", "", codes.OK},
		{"ModelStreamInfer", "echo", codes.OK},
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, want) {
		t.Errorf("observed %v\nwant     %v", seen, want)
	}
}

func benchmarkGRPCInfer(b *testing.B, discard bool) {
	addr, _ := grpcServe(b, server.NewGRPCServer(&grpcFake{}))
	c := grpcClient(b, addr, grpcclient.WithEagerConnect(10*time.Second))
	p, err := c.PrepareInfer(grpcEchoRequest("bench"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if discard {
			err = c.InferPreparedDiscard(ctx, p)
		} else {
			_, err = c.InferPrepared(ctx, p)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// One FP32[1,16] round trip at a time over loopback: the client's and the
// server's cost per request (both run in this process).
func BenchmarkGRPCInferPrepared(b *testing.B)        { benchmarkGRPCInfer(b, false) }
func BenchmarkGRPCInferPreparedDiscard(b *testing.B) { benchmarkGRPCInfer(b, true) }

// Many requests in flight on one stream all come back, matched by id.
func TestGRPCStreamInferMany(t *testing.T) {
	addr, _ := grpcServe(t, server.NewGRPCServer(&grpcFake{}))
	c := grpcClient(t, addr, grpcclient.WithConns(1))
	st, err := c.StreamInfer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 40
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			if err := st.Send(grpcEchoRequest(fmt.Sprint(i))); err != nil {
				sent <- err
				return
			}
		}
		sent <- st.CloseSend()
	}()
	seen := map[string]bool{}
	for {
		resp, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if seen[resp.ID] {
			t.Fatalf("id %s answered twice", resp.ID)
		}
		seen[resp.ID] = true
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Errorf("%d responses, want %d", len(seen), n)
	}
}

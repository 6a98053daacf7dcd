// Package servertest serves a kserve/server Backend on loopback for tests,
// and a model whose answers a test chooses: among them the answers an answer
// check must fail (kserve.Expect).
package servertest

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/triton"
)

// Serve serves b over HTTP and gRPC on loopback ports the kernel picks and
// returns their addresses and a function that stops both at once (also
// called when t ends).
func Serve(t testing.TB, b server.Backend) (httpAddr, grpcAddr string, stop func()) {
	t.Helper()
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &fasthttp.Server{Handler: server.NewHTTPHandler(b).ServeFastHTTP}
	gs := server.NewGRPCServer(b)
	go hs.Serve(hl)
	go gs.Serve(gl)
	var once atomic.Bool
	stop = func() {
		if once.CompareAndSwap(false, true) {
			gs.Stop()
			hs.Shutdown()
		}
	}
	t.Cleanup(stop)
	return hl.Addr().String(), gl.Addr().String(), stop
}

// Start serves a Model answering correctly (Answers[0]) until the test sets
// another answer, and returns it and its HTTP and gRPC addresses.
func Start(t testing.TB) (m *Model, httpAddr, grpcAddr string) {
	t.Helper()
	m = NewModel(Answers[0].Answer)
	httpAddr, grpcAddr, _ = Serve(t, m)
	return m, httpAddr, grpcAddr
}

// The model of Model: "m", batching up to MaxBatch, one input and one
// output, both FP32 [-1, 4].
const (
	ModelName = "m"
	MaxBatch  = 8
)

// Metadata is the model's metadata.
var Metadata = kserve.ModelMetadata{
	Name: ModelName, Versions: []string{"1"}, Platform: "servertest",
	Inputs:  []kserve.TensorMetadata{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 4}}},
	Outputs: []kserve.TensorMetadata{{Name: "OUTPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 4}}},
}

// Request is a request of Metadata's model for a batch of batch samples.
func Request(batch int64) *kserve.InferRequest {
	return &kserve.InferRequest{Model: ModelName, Inputs: []kserve.Tensor{
		{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{batch, 4}, Data: make([]byte, batch*16)}}}
}

// Expect is the answer check of a run of Metadata's model.
func Expect() *kserve.Expect { return kserve.NewExpect(ModelName, Metadata.Outputs, true) }

// Answer builds the answer to a request of Metadata's model.
type Answer func(req *kserve.InferRequest) *kserve.InferResponse

// Answers are the answers to a request: the correct one, and answers that
// are well formed but not the model's, which an answer check must fail
// (Bad).
var Answers = []struct {
	Name   string
	Bad    bool
	Answer Answer
}{
	{"correct", false, output("OUTPUT0", kserve.FP32, 4)},
	{"no outputs", true, func(req *kserve.InferRequest) *kserve.InferResponse {
		return &kserve.InferResponse{Model: ModelName, Version: "1", ID: req.ID}
	}},
	{"wrong output name", true, output("OUTPUT1", kserve.FP32, 4)},
	{"wrong datatype", true, output("OUTPUT0", kserve.Int32, 4)},
	{"wrong shape", true, output("OUTPUT0", kserve.FP32, 2)},
	{"another model", true, func(req *kserve.InferRequest) *kserve.InferResponse {
		r := output("OUTPUT0", kserve.FP32, 4)(req)
		r.Model = "other"
		return r
	}},
}

// output answers with one output of shape [batch, dims], batch the request's.
func output(name string, dt kserve.DataType, dims int64) Answer {
	return func(req *kserve.InferRequest) *kserve.InferResponse {
		batch := req.Inputs[0].Shape[0]
		t := kserve.Tensor{Name: name, Datatype: dt, Shape: []int64{batch, dims}, Data: make([]byte, batch*dims*int64(dt.Size()))}
		return &kserve.InferResponse{Model: ModelName, Version: "1", ID: req.ID, Outputs: []kserve.Tensor{t}}
	}
}

// Model is a server.Backend serving Metadata's model, answering each
// request with the Answer last set.
type Model struct {
	answer atomic.Pointer[Answer]
	// Requests counts the inference requests answered.
	Requests atomic.Int64
}

// NewModel is a Model answering with a.
func NewModel(a Answer) *Model {
	m := &Model{}
	m.Set(a)
	return m
}

// Set makes m answer with a from now on.
func (m *Model) Set(a Answer) { m.answer.Store(&a) }

func (*Model) ServerLive(context.Context) bool  { return true }
func (*Model) ServerReady(context.Context) bool { return true }

func (*Model) ServerMetadata(context.Context) kserve.ServerMetadata {
	return kserve.ServerMetadata{Name: "servertest", Version: "1", Extensions: []string{kserve.ExtBinaryTensorData, kserve.ExtModelConfiguration}}
}

func (*Model) ModelReady(_ context.Context, model, _ string) (bool, error) {
	if model != ModelName {
		return false, kserve.ErrNotFound
	}
	return true, nil
}

func (*Model) ModelMetadata(_ context.Context, model, _ string) (kserve.ModelMetadata, error) {
	if model != ModelName {
		return kserve.ModelMetadata{}, kserve.ErrNotFound
	}
	return Metadata, nil
}

func (m *Model) Infer(_ context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	if req.Model != ModelName {
		return nil, kserve.ErrNotFound
	}
	m.Requests.Add(1)
	return (*m.answer.Load())(req), nil
}

func (*Model) ModelConfig(_ context.Context, model, _ string) (triton.ModelConfig, error) {
	if model != ModelName {
		return triton.ModelConfig{}, kserve.ErrNotFound
	}
	return triton.ModelConfig{
		Name: ModelName, Platform: "servertest", MaxBatchSize: MaxBatch,
		Input:  []triton.ModelInput{{Name: "INPUT0", DataType: "TYPE_FP32", Dims: []int64{4}}},
		Output: []triton.ModelOutput{{Name: "OUTPUT0", DataType: "TYPE_FP32", Dims: []int64{4}}},
	}, nil
}

func (*Model) ModelStatistics(context.Context, string, string) (triton.StatisticsResponse, error) {
	return triton.StatisticsResponse{}, nil
}

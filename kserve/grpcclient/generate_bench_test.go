package grpcclient

// The generative client's cost per token, multiplexed (one stream per
// connection, the Generator) against a stream per request, with an
// in-process server answering each request with benchTokens one-token
// responses and an empty final one at once. Both sides run in the process:
// ns and allocations per token count the server's too, and the comparison
// is what the figures are for.
//
//	go test ./kserve/grpcclient -run '^$' -bench Generate -benchmem

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

const (
	benchTokens   = 64
	benchInflight = 32
)

type benchLLM struct {
	inferencepb.UnimplementedGRPCInferenceServiceServer
}

func (benchLLM) ModelStreamInfer(st inferencepb.GRPCInferenceService_ModelStreamInferServer) error {
	final := map[string]*inferencepb.InferParameter{genwire.FinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: true}}}
	notFinal := map[string]*inferencepb.InferParameter{genwire.FinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: false}}}
	out := []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: genwire.TextOutput, Datatype: "BYTES", Shape: []int64{1},
		Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte("tok ")}}}}
	for {
		req, err := st.Recv()
		if err != nil {
			return nil
		}
		for range benchTokens {
			if err := st.Send(&inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{Id: req.Id, Parameters: notFinal, Outputs: out}}); err != nil {
				return err
			}
		}
		if err := st.Send(&inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{Id: req.Id, Parameters: final}}); err != nil {
			return err
		}
	}
}

func benchClient(b *testing.B) *Client {
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := grpc.NewServer()
	inferencepb.RegisterGRPCInferenceServiceServer(s, benchLLM{})
	go s.Serve(nl)
	b.Cleanup(s.Stop)
	c, err := New(nl.Addr().String(), WithConns(1), WithEagerConnect(10*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

type benchHandler struct {
	tokens int
	err    error
	wg     *sync.WaitGroup
}

func (h *benchHandler) Tokens(_ time.Time, n int) { h.tokens += n }
func (h *benchHandler) End(_ time.Time, _ genai.Usage, err error) {
	h.err = err
	h.wg.Done()
}

// benchBatches runs b.N batches of benchInflight requests in flight at
// once, send sending one, and reports the cost per token.
func benchBatches(b *testing.B, send func(id uint64, h *benchHandler)) {
	var wg sync.WaitGroup
	hs := make([]benchHandler, benchInflight)
	n := uint64(0)
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		for k := range hs {
			hs[k] = benchHandler{wg: &wg}
		}
		wg.Add(len(hs))
		for k := range hs {
			send(n, &hs[k])
			n++
		}
		wg.Wait()
		for k := range hs {
			if hs[k].err != nil || hs[k].tokens != benchTokens {
				b.Fatalf("request: %d tokens, %v", hs[k].tokens, hs[k].err)
			}
		}
	}
	runtime.ReadMemStats(&after)
	tokens := float64(b.N * benchInflight * benchTokens)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/tokens, "ns/token")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/tokens, "allocs/token")
}

var benchPrompt = &genai.Prompt{Text: "hello", MaxTokens: benchTokens}

// The Generator: every request on the connection's one stream.
func BenchmarkGenerateMultiplexed(b *testing.B) {
	c := benchClient(b)
	g := c.NewGenerator(GenerateOptions{})
	defer g.Close()
	if err := g.Connect(b.Context()); err != nil {
		b.Fatal(err)
	}
	benchBatches(b, func(id uint64, h *benchHandler) {
		g.Generate(b.Context(), &genai.Request{Model: "llm", Prompt: benchPrompt, Stream: true, ID: id}, h)
	})
}

// The alternative: a stream per request, and its reader goroutine.
func BenchmarkGenerateStreamPerRequest(b *testing.B) {
	c := benchClient(b)
	g := c.NewGenerator(GenerateOptions{}) // for its request encoding only
	defer g.Close()
	benchBatches(b, func(id uint64, h *benchHandler) {
		msg, err := g.request(&genai.Request{Model: "llm", Prompt: benchPrompt, Stream: true, ID: id})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(b.Context())
		st, err := c.clients[0].ModelStreamInfer(ctx)
		if err == nil {
			err = st.SendMsg(msg)
		}
		if err != nil {
			cancel()
			h.End(time.Now(), genai.Usage{}, err)
			return
		}
		go func() {
			defer cancel()
			var w genWire
			for {
				if err := st.RecvMsg(&w); err != nil {
					if errors.Is(err, io.EOF) {
						err = errors.New("no final response")
					}
					h.End(time.Now(), genai.Usage{}, err)
					return
				}
				if n := w.Tokens(); n > 0 {
					h.Tokens(time.Now(), n)
				}
				if w.Final {
					_ = st.CloseSend()
					h.End(time.Now(), genai.Usage{}, nil)
					return
				}
			}
		}()
	})
}

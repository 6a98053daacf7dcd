package grpcclient

// The generative client's own allocations per token. The in-process
// benchmarks above count the server's as well (grpc-go's send path and
// the proto encoding of every response); here the same server runs in a
// child process (this test binary, re-executed), so the benchmark's
// allocation count is the client's alone: grpc-go's receive path, the
// codec's walk, the Generator's delivery and the handler.
//
//	go test ./kserve/grpcclient -run '^$' -bench GenerateClientOnly -benchmem

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"

	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// benchServerEnv, when set, turns the test binary into benchLLM's server:
// it prints its address and serves until its stdin closes.
const benchServerEnv = "GRPCCLIENT_BENCH_LLM_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) != "" {
		os.Exit(serveBenchLLM())
	}
	os.Exit(m.Run())
}

func serveBenchLLM() int {
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	s := grpc.NewServer()
	inferencepb.RegisterGRPCInferenceServiceServer(s, benchLLM{})
	go s.Serve(nl)
	fmt.Println(nl.Addr().String())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the parent goes
	s.Stop()
	return 0
}

// childServer starts benchLLM in a child process and returns its address.
func childServer(b *testing.B) string {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), benchServerEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "error") {
		b.Fatalf("bench server: %q, %v", line, err)
	}
	return strings.TrimSpace(line)
}

// BenchmarkGenerateClientOnly is BenchmarkGenerateMultiplexed against a
// server in another process: allocs/token are the client's.
func BenchmarkGenerateClientOnly(b *testing.B) {
	c, err := New(childServer(b), WithConns(1), WithEagerConnect(10*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	g := c.NewGenerator(GenerateOptions{})
	defer g.Close()
	if err := g.Connect(b.Context()); err != nil {
		b.Fatal(err)
	}
	benchBatches(b, func(id uint64, h *benchHandler) {
		g.Generate(b.Context(), &genai.Request{Model: "llm", Prompt: benchPrompt, Stream: true, ID: id}, h)
	})
}

// tokenDelivery is one streamed token's response on the wire (request id
// 7, not final) and a Generator's stream with that request pending, whose
// handler counts what is delivered.
func tokenDelivery(tb testing.TB) (grpcCodec, mem.BufferSlice, *genStream, *benchHandler) {
	tb.Helper()
	codec, err := newGRPCCodec()
	if err != nil {
		tb.Fatal(err)
	}
	wire, err := codec.Marshal(&inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{ModelName: "llm", Id: "7",
		Parameters: map[string]*inferencepb.InferParameter{genwire.FinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: false}}},
		Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: genwire.TextOutput, Datatype: "BYTES", Shape: []int64{1},
			Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte(" tok")}}}}}})
	if err != nil {
		tb.Fatal(err)
	}
	g := &Generator{slots: make([]genSlot, 1)}
	h := &benchHandler{}
	s := &genStream{g: g, pending: map[uint64]*genwire.Call{7: genwire.NewCall(context.Background(), &genai.Request{}, h)}}
	g.slots[0].cur = s
	return codec, wire, s, h
}

// BenchmarkGenerateDeliverToken is this package's share of a token's
// cost: one streamed response's bytes through the codec (the walk) and
// the Generator's delivery to the request's handler, as the stream's
// receiver does for every response. It allocates nothing; grpc-go's
// receive path before it (BenchmarkGenerateClientOnly's difference) is
// what allocates per message.
func BenchmarkGenerateDeliverToken(b *testing.B) {
	codec, wire, s, h := tokenDelivery(b)
	at := time.Now()
	var w genWire
	b.ReportAllocs()
	for b.Loop() {
		if err := codec.Unmarshal(wire, &w); err != nil {
			b.Fatal(err)
		}
		if err := s.deliver(at, &w); err != nil {
			b.Fatal(err)
		}
	}
	if h.tokens != b.N {
		b.Fatalf("%d tokens delivered, want %d", h.tokens, b.N)
	}
}

// TestGenerateDeliveryAllocatesNothing: a streamed token's response,
// through the codec and the Generator's delivery to its handler, costs no
// allocation (what grpc-go allocates before the codec is outside it).
func TestGenerateDeliveryAllocatesNothing(t *testing.T) {
	codec, wire, s, h := tokenDelivery(t)
	at := time.Now()
	var w genWire
	n := testing.AllocsPerRun(100, func() {
		if err := codec.Unmarshal(wire, &w); err != nil {
			t.Fatal(err)
		}
		if err := s.deliver(at, &w); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per token response, want 0", n)
	}
	if h.tokens != 101 || h.err != nil {
		t.Errorf("handler heard %d tokens (%v), want 101", h.tokens, h.err)
	}
}

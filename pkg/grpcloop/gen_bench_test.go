package grpcloop

// The generative clients' own cost per token, grpcloop's Generator beside
// grpc-go's (grpcclient.Generator), against one grpc-go server in a child
// process (this test binary, re-executed), so that allocations and CPU
// time are the client's alone: each request is answered at once with
// genBenchTokens one-token responses and an empty final one, as
// grpcclient's BenchmarkGenerateClientOnly does.
//
//	go test ./pkg/grpcloop -run '^$' -bench GenerateClientOnly -benchmem -count 3

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

const (
	genBenchServerEnv = "GRPCLOOP_BENCH_LLM_SERVER"
	genBenchTokens    = 64
	genBenchInflight  = 32
)

type genBenchLLM struct {
	inferencepb.UnimplementedGRPCInferenceServiceServer
}

func (genBenchLLM) ModelStreamInfer(st inferencepb.GRPCInferenceService_ModelStreamInferServer) error {
	final := map[string]*inferencepb.InferParameter{genwire.FinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: true}}}
	notFinal := map[string]*inferencepb.InferParameter{genwire.FinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: false}}}
	out := []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: genwire.TextOutput, Datatype: "BYTES", Shape: []int64{1},
		Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte("tok ")}}}}
	for {
		req, err := st.Recv()
		if err != nil {
			return nil
		}
		for range genBenchTokens {
			if err := st.Send(&inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{Id: req.Id, Parameters: notFinal, Outputs: out}}); err != nil {
				return err
			}
		}
		if err := st.Send(&inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{Id: req.Id, Parameters: final}}); err != nil {
			return err
		}
	}
}

// serveGenBench is the child: it prints its address and serves until its
// stdin closes.
func serveGenBench() int {
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	s := grpc.NewServer()
	inferencepb.RegisterGRPCInferenceServiceServer(s, genBenchLLM{})
	go s.Serve(nl)
	fmt.Println(nl.Addr().String())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	s.Stop()
	return 0
}

func genChildServer(b *testing.B) string {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), genBenchServerEnv+"=1")
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

type genBenchHandler struct {
	tokens int
	err    error
	wg     *sync.WaitGroup
}

func (h *genBenchHandler) Tokens(_ time.Time, n int) { h.tokens += n }
func (h *genBenchHandler) End(_ time.Time, _ genai.Usage, err error) {
	h.err = err
	h.wg.Done()
}

// BenchmarkGenerateClientOnly: b.N batches of genBenchInflight requests in
// flight at once on one connection, per client; ns, CPU ns and allocations
// per token are the client's (the server is another process).
func BenchmarkGenerateClientOnly(b *testing.B) {
	addr := genChildServer(b)
	prompt := &genai.Prompt{Text: "hello", MaxTokens: genBenchTokens}
	b.Run("grpcloop", func(b *testing.B) {
		g, err := NewGenerator(GenConfig{Addr: addr, Conns: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		if err := g.Connect(b.Context()); err != nil {
			b.Fatal(err)
		}
		genBatches(b, g, prompt)
	})
	b.Run("grpc-go", func(b *testing.B) {
		c, err := grpcclient.New(addr, grpcclient.WithConns(1), grpcclient.WithEagerConnect(10*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		g := c.NewGenerator(genwire.Options{})
		defer g.Close()
		if err := g.Connect(b.Context()); err != nil {
			b.Fatal(err)
		}
		genBatches(b, g, prompt)
	})
}

func genBatches(b *testing.B, g genai.Client, prompt *genai.Prompt) {
	var wg sync.WaitGroup
	hs := make([]genBenchHandler, genBenchInflight)
	reqs := make([]genai.Request, genBenchInflight)
	n := uint64(0)
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := processCPU()
	for b.Loop() {
		for k := range hs {
			hs[k] = genBenchHandler{wg: &wg}
		}
		wg.Add(len(hs))
		for k := range hs {
			reqs[k] = genai.Request{Model: "llm", Prompt: prompt, Stream: true, ID: n}
			g.Generate(context.Background(), &reqs[k], &hs[k])
			n++
		}
		wg.Wait()
		for k := range hs {
			if hs[k].err != nil || hs[k].tokens != genBenchTokens {
				b.Fatalf("request: %d tokens, %v", hs[k].tokens, hs[k].err)
			}
		}
	}
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&after)
	tokens := float64(b.N * genBenchInflight * genBenchTokens)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/tokens, "ns/token")
	b.ReportMetric(float64(cpu.Nanoseconds())/tokens, "cpu-ns/token")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/tokens, "allocs/token")
}

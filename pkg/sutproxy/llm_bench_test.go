package sutproxy_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// tputLLM decodes up to 1024 sequences in steps of 5 ms whatever their
// number: 256 streams of 256 tokens give 256 × 200 = 51 200 tokens/s.
const tputLLM = "name=tput,kind=llm,max_seqs=1024,step=5ms,per_seq=0s,prefill=1ns,max_tokens_limit=4096"

// BenchmarkLLMStreams runs 256 concurrent answers of 256 tokens (≈51k
// tokens/s) through sutproxy over OpenAI SSE and over ModelStreamInfer,
// with a minimal client in the same process, and reports the tokens/s
// achieved and the CPU both sides spent per token:
//
//	go test -run '^$' -bench LLMStreams -benchtime 1x ./pkg/sutproxy
func BenchmarkLLMStreams(b *testing.B) {
	const streams, tokens = 256, 256
	for _, transport := range []string{"sse", "grpc"} {
		b.Run(transport, func(b *testing.B) {
			p := sutproxytest.Start(b, tputLLM)
			for b.Loop() {
				cpu0 := cpuTime()
				start := time.Now()
				var got int
				if transport == "sse" {
					got = sseStreams(b, p.HTTPAddr(), streams, tokens)
				} else {
					got = grpcStreams(b, p.GRPCAddr(), streams, tokens)
				}
				el, cpu := time.Since(start), cpuTime()-cpu0
				if got != streams*tokens {
					b.Fatalf("%d tokens, want %d", got, streams*tokens)
				}
				b.ReportMetric(float64(got)/el.Seconds(), "tokens/s")
				b.ReportMetric(float64(cpu.Microseconds())/float64(got), "cpu_us/token")
			}
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sseStreams runs n streamed completions on raw connections, counting
// token events.
func sseStreams(b *testing.B, addr string, n, tokens int) int {
	body := fmt.Sprintf(`{"model":"tput","prompt":"x","max_tokens":%d,"ignore_eos":true,"stream":true}`, tokens)
	req := fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Error(err)
				return
			}
			defer c.Close()
			if _, err := c.Write([]byte(req)); err != nil {
				b.Error(err)
				return
			}
			br := bufio.NewReader(c)
			count := 0
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					b.Error(err)
					return
				}
				if bytes.HasPrefix(line, []byte("data: [DONE]")) {
					break
				}
				if bytes.HasPrefix(line, []byte("data: {")) {
					count++
				}
			}
			mu.Lock()
			total += count
			mu.Unlock()
		})
	}
	wg.Wait()
	return total
}

// grpcStreams runs n streamed requests multiplexed on one ModelStreamInfer.
func grpcStreams(b *testing.B, addr string, n, tokens int) int {
	conn, st := openStream(b, addr)
	defer conn.Close()
	for i := range n {
		if err := st.Send(llmRequest("tput", fmt.Sprint(i), "x", int32(tokens), true)); err != nil {
			b.Fatal(err)
		}
	}
	total, finals := 0, 0
	for finals < n {
		m, err := st.Recv()
		if err != nil {
			b.Fatal(err)
		}
		total++
		if final(m.GetInferResponse()) {
			finals++
		}
	}
	return total
}

package genclient

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
)

// replayServer answers every request on a keep-alive connection with the
// same prebuilt response, written in the pieces given (one write each),
// reading requests without allocating, so that a benchmark's allocations
// are the client's.
func replayServer(tb testing.TB, answer ...[]byte) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go replay(conn, answer)
		}
	}()
	return "http://" + ln.Addr().String()
}

func replay(conn net.Conn, answer [][]byte) {
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	for {
		length := 0
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			line = bytes.TrimRight(line, "\r\n")
			if len(line) == 0 {
				break
			}
			if v, ok := bytes.CutPrefix(bytes.ToLower(line), []byte("content-length: ")); ok {
				length, _ = strconv.Atoi(string(v))
			}
		}
		if _, err := br.Discard(length); err != nil {
			return
		}
		for _, piece := range answer {
			if _, err := conn.Write(piece); err != nil {
				return
			}
		}
	}
}

// sseAnswer is a chunked SSE response of n chat tokens, one chunk each,
// then the usage chunk and [DONE].
func sseAnswer(n int) []byte { return bytes.Join(ssePieces(n), nil) }

// ssePieces is sseAnswer in pieces: the head with the first token, then
// one token a piece, then the end.
func ssePieces(n int) [][]byte {
	var pieces [][]byte
	var b bytes.Buffer
	b.WriteString(sseHead)
	for i := range n {
		if i > 0 {
			pieces = append(pieces, bytes.Clone(b.Bytes()))
			b.Reset()
		}
		b.WriteString(chunk("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w" + strconv.Itoa(i) + "\"},\"finish_reason\":null}]}\n\n"))
	}
	b.WriteString(chunk("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":" + strconv.Itoa(n) + "}}\n\n"))
	b.WriteString(chunk("data: [DONE]\n\n"))
	b.WriteString("0\r\n\r\n")
	return append(pieces, b.Bytes())
}

// countingHandler counts tokens and signals the end, allocating nothing.
type countingHandler struct {
	tokens int
	err    error
	done   chan struct{}
}

func (h *countingHandler) Tokens(_ time.Time, n int)               { h.tokens += n }
func (h *countingHandler) End(_ time.Time, _ genai.Usage, e error) { h.err = e; h.done <- struct{}{} }

// BenchmarkStreamedRequest: one op is one streamed chat request of 256
// tokens over loopback, end to end (request built and written, every SSE
// event read, parsed and timed), the answer written whole or a token per
// write (a read per token, as a server streaming in real time makes).
// Reported: ns and allocations per token, and allocations per request (its
// goroutine, its JSON body: none of them per token). The server's writes
// are in the same process and in ns/token.
func BenchmarkStreamedRequest(b *testing.B) {
	const n = 256
	b.Run("whole", func(b *testing.B) { benchStream(b, n, sseAnswer(n)) })
	b.Run("token-per-write", func(b *testing.B) { benchStream(b, n, ssePieces(n)...) })
}

func benchStream(b *testing.B, n int, answer ...[]byte) {
	c, err := New(replayServer(b, answer...), genai.APIOpenAIChat, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	h := &countingHandler{done: make(chan struct{}, 1)}
	req := &genai.Request{Model: "m", Prompt: &genai.Prompt{Text: "a b c d e f g h", MaxTokens: n}, Stream: true}
	ctx := context.Background()
	run := func() {
		h.tokens = 0
		c.Generate(ctx, req, h)
		<-h.done
		if h.err != nil || h.tokens != n {
			b.Fatalf("End %v after %d tokens", h.err, h.tokens)
		}
	}
	run() // warm the pools and the connection
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		run()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	allocs := float64(after.Mallocs-before.Mallocs) / float64(b.N)
	b.ReportMetric(allocs, "allocs/request")
	b.ReportMetric(allocs/float64(n), "allocs/token")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/token")
}

// TestStreamAllocationsDoNotGrowWithTokens: end to end, a 1024-token
// stream costs the same allocations as a 16-token one: nothing is
// allocated per token (only per request).
func TestStreamAllocationsDoNotGrowWithTokens(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	per := map[int]float64{}
	for _, n := range []int{16, 1024} {
		c := newClient(t, replayServer(t, ssePieces(n)...), genai.APIOpenAIChat, Options{})
		h := &countingHandler{done: make(chan struct{}, 1)}
		req := &genai.Request{Model: "m", Prompt: &genai.Prompt{Text: "a b", MaxTokens: n}, Stream: true}
		run := func() {
			h.tokens = 0
			c.Generate(context.Background(), req, h)
			<-h.done
			if h.err != nil || h.tokens != n {
				t.Fatalf("End %v after %d tokens, want %d", h.err, h.tokens, n)
			}
		}
		run()
		per[n] = testing.AllocsPerRun(50, run)
	}
	if per[1024] > per[16] {
		t.Errorf("%v allocations per 1024-token request, %v per 16-token one: want no more", per[1024], per[16])
	}
	t.Logf("allocations per request: %v", per)
}

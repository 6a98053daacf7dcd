package grpcloop

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/genai"
	outcomes "github.com/netloadgen/netloadgen/pkg/outcome"
)

// llmServer is an in-process ModelStreamInfer server on grpc-go with
// Triton's LLM conventions; answer decides what each request gets (send
// writes one response, raw one message's bytes; returning an error ends
// the stream with it, errEndStream ends it cleanly).
type llmServer struct {
	mu       sync.Mutex
	reqs     []*inferencepb.ModelInferRequest
	streamOf []int // by request, the stream (1, 2, ...) it came on
	streams  int
	opened   chan int // each stream's number as it opens (the first 64)
}

var errEndStream = errors.New("end the stream")

type llmAnswer func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), raw func([]byte)) error

// genRawCodec passes messages through as bytes.
type genRawCodec struct{}

type genRawMsg struct{ b []byte }

func (genRawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.(*genRawMsg).b)}, nil
}
func (genRawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	v.(*genRawMsg).b = data.Materialize()
	return nil
}
func (genRawCodec) Name() string { return "raw" }

var _ encoding.CodecV2 = genRawCodec{}

func startLLM(t *testing.T, answer llmAnswer) (*llmServer, string) {
	t.Helper()
	ls := &llmServer{opened: make(chan int, 64)}
	s := grpc.NewServer(grpc.ForceServerCodecV2(genRawCodec{}), grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		ls.mu.Lock()
		ls.streams++
		stream := ls.streams
		ls.mu.Unlock()
		select {
		case ls.opened <- stream:
		default:
		}
		var mu sync.Mutex // sends of concurrent answers
		raw := func(b []byte) {
			mu.Lock()
			defer mu.Unlock()
			_ = st.SendMsg(&genRawMsg{b: b})
		}
		send := func(r *inferencepb.ModelStreamInferResponse) {
			b, err := proto.Marshal(r)
			if err != nil {
				panic(err)
			}
			raw(b)
		}
		for {
			var m genRawMsg
			if err := st.RecvMsg(&m); err != nil {
				return nil
			}
			req := new(inferencepb.ModelInferRequest)
			if err := proto.Unmarshal(m.b, req); err != nil {
				return err
			}
			ls.mu.Lock()
			ls.reqs = append(ls.reqs, req)
			ls.streamOf = append(ls.streamOf, stream)
			ls.mu.Unlock()
			if err := answer(req, send, raw); err != nil {
				if errors.Is(err, errEndStream) {
					return nil
				}
				return err
			}
		}
	}))
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(nl)
	t.Cleanup(s.Stop)
	return ls, nl.Addr().String()
}

func (ls *llmServer) requests() []*inferencepb.ModelInferRequest {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return slices.Clone(ls.reqs)
}

// tokenResp is one streamed response of request id: a text_output step,
// with ids output ids when ids > 0, final as given.
func tokenResp(id string, ids int, final bool) *inferencepb.ModelStreamInferResponse {
	r := &inferencepb.ModelInferResponse{ModelName: "llm", Id: id,
		Parameters: map[string]*inferencepb.InferParameter{genwire.FinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: final}}},
		Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: genwire.TextOutput, Datatype: "BYTES", Shape: []int64{1},
			Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte("tok ")}}}}}
	if ids > 0 {
		r.Outputs = append(r.Outputs, &inferencepb.ModelInferResponse_InferOutputTensor{Name: genwire.OutputIDs, Datatype: "INT32", Shape: []int64{1, int64(ids)},
			Contents: &inferencepb.InferTensorContents{IntContents: make([]int32, ids)}})
	}
	return &inferencepb.ModelStreamInferResponse{InferResponse: r}
}

func emptyFinal(id string) *inferencepb.ModelStreamInferResponse {
	return &inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{ModelName: "llm", Id: id,
		Parameters: map[string]*inferencepb.InferParameter{genwire.FinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: true}}}}}
}

func maxTokensOf(req *inferencepb.ModelInferRequest) int {
	for _, in := range req.GetInputs() {
		if in.GetName() == genwire.MaxTokens {
			return int(in.GetContents().GetIntContents()[0])
		}
	}
	return 0
}

// streamTokens answers max_tokens one-token responses then an empty final.
func streamTokens(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
	for range maxTokensOf(req) {
		send(tokenResp(req.GetId(), 0, false))
	}
	send(emptyFinal(req.GetId()))
	return nil
}

// recorder is a handler that keeps what it heard.
type recorder struct {
	mu      sync.Mutex
	tokens  []int
	content []string
	ends    int
	usage   genai.Usage
	err     error
	after   bool // Tokens after End
	done    chan struct{}
}

func newRecorder() *recorder { return &recorder{done: make(chan struct{})} }

func (r *recorder) Tokens(_ time.Time, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ends > 0 {
		r.after = true
	}
	r.tokens = append(r.tokens, n)
}

func (r *recorder) End(_ time.Time, u genai.Usage, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends++
	r.usage, r.err = u, err
	if r.ends == 1 {
		close(r.done)
	}
}

func (r *recorder) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("request never ended")
	}
}

// capturer is a recorder that takes the answer's content.
type capturer struct{ *recorder }

func (c capturer) Content(text []byte, ids []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.content = append(c.content, fmt.Sprintf("%s%v", text, ids))
}

func newGen(t *testing.T, addr string, conns int, opts genwire.Options) *Generator {
	t.Helper()
	g, err := NewGenerator(GenConfig{Addr: addr, Conns: conns, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// TestGeneratorSpreadsRequests: a request goes to a connection with
// nothing in flight while there is one, so that the tokens of concurrent
// answers never share a socket's receive stamps (turn by turn would put the
// fifth request beside the first, still answering, on a connection of
// four), and past Conns to the least busy.
func TestGeneratorSpreadsRequests(t *testing.T) {
	release := make(chan struct{})
	ls, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), raw func([]byte)) error {
		if id, _ := strconv.Atoi(req.GetId()); id == 0 || id >= 5 {
			<-release // held in flight
		}
		return streamTokens(req, send, raw)
	})
	g := newGen(t, addr, 4, genwire.Options{})
	if err := g.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	rs := make([]*recorder, 10)
	send := func(i int) {
		rs[i] = newRecorder()
		g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 2), Stream: true, ID: uint64(i)}, rs[i])
	}
	send(0)
	for i := 1; i <= 4; i++ { // one at a time, each answered at once
		send(i)
		rs[i].wait(t)
	}
	for i := 5; i < len(rs); i++ { // held: with request 0, 6 on 4 connections
		send(i)
	}
	close(release)
	for i, r := range rs {
		r.wait(t)
		if r.err != nil || len(r.tokens) != 2 {
			t.Fatalf("request %d: tokens %v, %v", i, r.tokens, r.err)
		}
	}
	ls.mu.Lock()
	stream := map[int]int{}
	for i, r := range ls.reqs {
		id, _ := strconv.Atoi(r.GetId())
		stream[id] = ls.streamOf[i]
	}
	ls.mu.Unlock()
	for i := 1; i <= 4; i++ {
		if stream[i] == stream[0] {
			t.Errorf("request %d went beside request 0, still in flight, on stream %d, with three connections idle (streams %v)", i, stream[0], stream)
		}
	}
	held := map[int]int{stream[0]: 1}
	for i := 5; i < len(rs); i++ {
		held[stream[i]]++
	}
	for st, k := range held {
		if len(held) != 4 || k > 2 {
			t.Errorf("6 requests in flight on 4 connections: stream %d carried %d (streams %v); want each connection used, none with more than 2", st, k, stream)
		}
	}
}

// TestGeneratorOpensConnectionsAsNeeded: without Connect, the first
// request dials; one that finds every open connection busy goes to the
// least busy while the next connection is dialled off its goroutine, and
// the request after the dial has that connection to itself.
func TestGeneratorOpensConnectionsAsNeeded(t *testing.T) {
	release := make(chan struct{})
	ls, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), raw func([]byte)) error {
		<-release
		return streamTokens(req, send, raw)
	})
	g := newGen(t, addr, 4, genwire.Options{})
	rs := make([]*recorder, 3)
	send := func(i int) {
		rs[i] = newRecorder()
		g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 1), Stream: true, ID: uint64(i)}, rs[i])
	}
	waitStream := func(want int) {
		t.Helper()
		select {
		case got := <-ls.opened:
			if got != want {
				t.Fatalf("stream %d opened, want %d", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("stream %d never opened", want)
		}
	}
	send(0)
	waitStream(1)
	send(1) // the one connection is busy: beside it, and a second one dials
	waitStream(2)
	// The dialler marks the connection open after writing its stream's
	// headers, so a moment after the server has them; nothing signals it.
	for deadline := time.Now().Add(10 * time.Second); !g.conns[1].open.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second connection never opened")
		}
	}
	send(2)
	close(release)
	for i, r := range rs {
		r.wait(t)
		if r.err != nil || len(r.tokens) != 1 {
			t.Fatalf("request %d: tokens %v, %v", i, r.tokens, r.err)
		}
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	stream := map[string]int{}
	for i, r := range ls.reqs {
		stream[r.GetId()] = ls.streamOf[i]
	}
	if ls.streams != 2 || stream["0"] != 1 || stream["1"] != 1 || stream["2"] != 2 {
		t.Errorf("%d streams, requests on %v: want 0 and 1 on the first, 2 on the second (dialled when 1 found the first busy)", ls.streams, stream)
	}
}

func prompt(text string, max int) *genai.Prompt {
	return &genai.Prompt{Text: text, InputTokens: 1, MaxTokens: max}
}

// Many concurrent requests multiplexed on one stream each get exactly their
// own tokens, one per response, then one End; the server sees every
// request with Triton's conventions, on one stream.
func TestGeneratorStreamsTokens(t *testing.T) {
	ls, addr := startLLM(t, streamTokens)
	g := newGen(t, addr, 1, genwire.Options{})
	if err := g.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	const n = 40
	rs := make([]*recorder, n)
	for i := range rs {
		rs[i] = newRecorder()
		g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 1+i%7), Stream: true, ID: uint64(100 + i)}, rs[i])
	}
	for i, r := range rs {
		r.wait(t)
		if r.err != nil || len(r.tokens) != 1+i%7 || r.ends != 1 || r.after {
			t.Errorf("request %d: tokens %v, End %d times (%v), tokens after End %v: want %d tokens and one End", i, r.tokens, r.ends, r.err, r.after, 1+i%7)
		}
	}
	reqs := ls.requests()
	if len(reqs) != n {
		t.Fatalf("server saw %d requests, want %d", len(reqs), n)
	}
	in := reqs[0].GetInputs()
	if reqs[0].GetId() != "100" || len(in) != 3 || in[0].GetName() != genwire.TextInput || maxTokensOf(reqs[0]) != 1 ||
		!reqs[0].GetParameters()[genwire.EmptyFinal].GetBoolParam() {
		t.Errorf("first request %v: want id 100, text_input, max_tokens 1, stream, and %s", reqs[0], genwire.EmptyFinal)
	}
}

// A response's output_ids are its tokens and their sum the server's count;
// the captured content is each token-bearing response's text and ids.
func TestGeneratorOutputIDsAndContent(t *testing.T) {
	_, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
		send(tokenResp(req.GetId(), 3, false))
		send(tokenResp(req.GetId(), 2, true)) // the final flag on the last token
		return nil
	})
	g := newGen(t, addr, 1, genwire.Options{Batched: true})
	r := newRecorder()
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 5), Stream: true, ID: 7, Capture: true}, capturer{r})
	r.wait(t)
	if r.err != nil || !slices.Equal(r.tokens, []int{3, 2}) || r.usage.OutputTokens != 5 {
		t.Fatalf("tokens %v usage %+v err %v, want [3 2], 5 from the server, nil", r.tokens, r.usage, r.err)
	}
	if want := []string{"tok [0 0 0]", "tok [0 0]"}; !slices.Equal(r.content, want) {
		t.Errorf("content %q, want %q", r.content, want)
	}
}

// A model that is not decoupled answers once, without a final flag: that
// answer ends the request.
func TestGeneratorOneResponse(t *testing.T) {
	_, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
		r := tokenResp(req.GetId(), 0, false)
		r.InferResponse.Parameters = nil
		send(r)
		return nil
	})
	g := newGen(t, addr, 1, genwire.Options{OneResponse: true})
	r := newRecorder()
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 4), ID: 1}, r)
	r.wait(t)
	if r.err != nil || len(r.tokens) != 1 {
		t.Fatalf("tokens %v err %v, want one response, no error", r.tokens, r.err)
	}
}

// Every malformed answer fails its request with the error grpc-go's
// Generator gives (the same outcome, the same kinds), never a success and
// never a hang; the next request opens a new stream and succeeds.
func TestGeneratorMalformedAsGRPCGo(t *testing.T) {
	tests := []struct {
		name   string
		answer llmAnswer
		stream bool // want genai.ErrStream and kserve.ErrMalformed
		server bool // want the server's *kserve.Error
	}{
		{name: "error mid-stream", stream: true, server: true, answer: func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			send(tokenResp(req.GetId(), 0, false))
			send(&inferencepb.ModelStreamInferResponse{ErrorMessage: "out of memory", InferResponse: &inferencepb.ModelInferResponse{Id: req.GetId()}})
			return nil
		}},
		{name: "error before any token", server: true, answer: func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			send(&inferencepb.ModelStreamInferResponse{ErrorMessage: "bad input", InferResponse: &inferencepb.ModelInferResponse{Id: req.GetId()}})
			return nil
		}},
		{name: "stream ends without the final response", stream: true, answer: func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			send(tokenResp(req.GetId(), 0, false))
			return errEndStream
		}},
		{name: "response for an unknown request", stream: true, answer: func(_ *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			send(tokenResp("999999", 0, false))
			return nil
		}},
		{name: "response with a non-numeric id", stream: true, answer: func(_ *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			send(tokenResp("abc", 0, true))
			return nil
		}},
		{name: "bytes that are not a response", stream: true, answer: func(_ *inferencepb.ModelInferRequest, _ func(*inferencepb.ModelStreamInferResponse), raw func([]byte)) error {
			raw([]byte{0xff, 0xff, 0xff})
			return nil
		}},
		{name: "a response with no output that is not the final one", stream: true, answer: func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			send(tokenResp(req.GetId(), 0, false))
			send(&inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{Id: req.GetId()}})
			return nil // and nothing more: the stream stays open
		}},
		{name: "neither response nor error", stream: true, answer: func(_ *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			send(&inferencepb.ModelStreamInferResponse{})
			return nil
		}},
		{name: "stream fails with a status", server: true, answer: func(*inferencepb.ModelInferRequest, func(*inferencepb.ModelStreamInferResponse), func([]byte)) error {
			return kserve.Errorf(codes.Internal, "backend crashed")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			first := true
			_, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), raw func([]byte)) error {
				mu.Lock()
				f := first
				first = false
				mu.Unlock()
				if f {
					return tc.answer(req, send, raw)
				}
				return streamTokens(req, send, raw)
			})
			g := newGen(t, addr, 1, genwire.Options{})
			r := newRecorder()
			g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 3), Stream: true, ID: 1}, r)
			r.wait(t)
			if r.err == nil {
				t.Fatal("a malformed answer succeeded")
			}
			if got := errors.Is(r.err, genai.ErrStream) && errors.Is(r.err, kserve.ErrMalformed); got != tc.stream {
				t.Errorf("err %v: malformed stream %v, want %v", r.err, got, tc.stream)
			}
			if _, isServer := errors.AsType[*kserve.Error](r.err); isServer != tc.server {
				t.Errorf("err %v: the server's error %v, want %v", r.err, isServer, tc.server)
			}
			if r.after || r.ends != 1 {
				t.Errorf("End called %d times, tokens after End %v", r.ends, r.after)
			}
			next := newRecorder()
			g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 2), Stream: true, ID: 2}, next)
			next.wait(t)
			if next.err != nil || len(next.tokens) != 2 {
				t.Fatalf("after the failure: tokens %v err %v, want 2 and no error", next.tokens, next.err)
			}
			// grpc-go's Generator, against the same answer, fails the
			// sample with the same outcome.
			mu.Lock()
			first = true
			mu.Unlock()
			c, err := grpcclient.New(addr, grpcclient.WithConns(1), grpcclient.WithEagerConnect(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			gg := c.NewGenerator(genwire.Options{})
			defer gg.Close()
			theirs := newRecorder()
			gg.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 3), Stream: true, ID: 1}, theirs)
			theirs.wait(t)
			mine, _ := outcomes.Classify(r.err)
			want, _ := outcomes.Classify(theirs.err)
			if mine != want {
				t.Errorf("outcome %s (%v), grpc-go's Generator's %s (%v)", mine, r.err, want, theirs.err)
			}
		})
	}
}

// A server that never answers does not hang a request: its context's end
// ends it, and Close ends the rest; a request after Close fails.
func TestGeneratorStalledServer(t *testing.T) {
	_, addr := startLLM(t, func(*inferencepb.ModelInferRequest, func(*inferencepb.ModelStreamInferResponse), func([]byte)) error {
		return nil // no answer, ever
	})
	g, err := NewGenerator(GenConfig{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancelled, open := newRecorder(), newRecorder()
	g.Generate(ctx, &genai.Request{Model: "llm", Prompt: prompt("p", 3), Stream: true, ID: 1}, cancelled)
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 3), Stream: true, ID: 2}, open)
	cancel()
	cancelled.wait(t)
	if !errors.Is(cancelled.err, context.Canceled) {
		t.Errorf("cancelled request: %v, want context.Canceled", cancelled.err)
	}
	g.Close()
	open.wait(t)
	if !errors.Is(open.err, ErrClosed) {
		t.Errorf("a request in flight at Close: %v, want ErrClosed", open.err)
	}
	late := newRecorder()
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 3), ID: 3}, late)
	late.wait(t)
	if !errors.Is(late.err, ErrClosed) {
		t.Errorf("a request after Close: %v, want ErrClosed", late.err)
	}
	if cancelled.ends != 1 || open.ends != 1 {
		t.Errorf("End %d and %d times, want once each", cancelled.ends, open.ends)
	}
}

// A request cancelled in flight ends at once, and the answer the server
// still sends for it is not "a response for an unknown request": the
// stream, and the requests beside it, carry on.
func TestGeneratorCancelledAnswerArrivesLate(t *testing.T) {
	release := make(chan struct{})
	_, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), raw func([]byte)) error {
		if req.GetId() == "1" {
			<-release // answered once the client has given up on it
		}
		return streamTokens(req, send, raw)
	})
	g := newGen(t, addr, 1, genwire.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	first := newRecorder()
	g.Generate(ctx, &genai.Request{Model: "llm", Prompt: prompt("p", 3), Stream: true, ID: 1}, first)
	cancel()
	first.wait(t)
	if !errors.Is(first.err, context.Canceled) {
		t.Fatalf("cancelled request: %v, want context.Canceled", first.err)
	}
	close(release)
	second := newRecorder()
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 2), Stream: true, ID: 2}, second)
	second.wait(t)
	if second.err != nil || len(second.tokens) != 2 {
		t.Fatalf("the next request: tokens %v err %v, want 2 and no error", second.tokens, second.err)
	}
	if first.ends != 1 || first.after {
		t.Errorf("the cancelled request: End %d times, tokens after End %v", first.ends, first.after)
	}
}

// A request whose id is already in flight fails at once, and the first one
// is unharmed; a refused connection fails the request as a transport error.
func TestGeneratorRefuses(t *testing.T) {
	release := make(chan struct{})
	_, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), raw func([]byte)) error {
		<-release
		return streamTokens(req, send, raw)
	})
	g := newGen(t, addr, 1, genwire.Options{})
	first, dup := newRecorder(), newRecorder()
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 2), Stream: true, ID: 5}, first)
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 2), Stream: true, ID: 5}, dup)
	dup.wait(t)
	if !errors.Is(dup.err, kserve.ErrInvalidArgument) {
		t.Errorf("a second request with id 5: %v, want InvalidArgument", dup.err)
	}
	close(release)
	first.wait(t)
	if first.err != nil || len(first.tokens) != 2 {
		t.Errorf("the first: tokens %v err %v", first.tokens, first.err)
	}

	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := nl.Addr().String()
	nl.Close()
	gd := newGen(t, dead, 1, genwire.Options{})
	r := newRecorder()
	gd.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 2), Stream: true, ID: 1}, r)
	r.wait(t)
	if !errors.Is(r.err, kserve.ErrTransport) || errors.Is(r.err, kserve.ErrConnectionClosed) {
		t.Errorf("a refused connection: %v, want a transport error, not connection_closed", r.err)
	}
	if _, err := NewGenerator(GenConfig{Addr: "no port"}); err == nil {
		t.Error("an address without a port was accepted")
	}
}

// A request larger than the server's flow-control window (grpc-go's 64 KiB)
// waits in part for its WINDOW_UPDATEs and arrives whole, in DATA frames of
// at most the server's frame size; a response larger than a frame arrives
// in several and is read as one message.
func TestGeneratorLargeMessages(t *testing.T) {
	big := strings.Repeat("x", 40<<10)
	ls, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
		r := tokenResp(req.GetId(), 0, true)
		r.InferResponse.Outputs[0].Contents.BytesContents[0] = []byte(big)
		send(r)
		return nil
	})
	g := newGen(t, addr, 1, genwire.Options{})
	prompts := []string{strings.Repeat("a", 300<<10), strings.Repeat("b", 200<<10)}
	rs := []*recorder{newRecorder(), newRecorder()}
	for i, p := range prompts {
		g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt(p, 1), Stream: true, ID: uint64(i + 1), Capture: true}, capturer{rs[i]})
	}
	for i, r := range rs {
		r.wait(t)
		if r.err != nil || len(r.tokens) != 1 || len(r.content) != 1 || r.content[0] != big+"[]" {
			t.Fatalf("request %d: tokens %v err %v, content of %d bytes", i, r.tokens, r.err, len(strings.Join(r.content, "")))
		}
	}
	for i, req := range ls.requests() {
		if got := string(req.GetInputs()[0].GetContents().GetBytesContents()[0]); got != prompts[i] {
			t.Errorf("request %d: the server read a prompt of %d bytes, want %d", i, len(got), len(prompts[i]))
		}
	}
}

package grpcclient_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// llmServer is an in-process ModelStreamInfer server with Triton's LLM
// conventions; answer decides what each request gets (send writes one
// response; returning an error ends the stream with it, errEndStream
// ends it cleanly).
type llmServer struct {
	mu   sync.Mutex
	reqs []*inferencepb.ModelInferRequest
}

var errEndStream = errors.New("end the stream")

type llmAnswer func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), sendRaw func([]byte)) error

func startLLM(t *testing.T, answer llmAnswer) (*llmServer, string) {
	t.Helper()
	ls := &llmServer{}
	s := grpc.NewServer(grpc.ForceServerCodecV2(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, st grpc.ServerStream) error {
		var mu sync.Mutex // sends of concurrent answers
		sendRaw := func(b []byte) {
			mu.Lock()
			defer mu.Unlock()
			_ = st.SendMsg(&rawMsg{b: b})
		}
		send := func(r *inferencepb.ModelStreamInferResponse) {
			b, err := proto.Marshal(r)
			if err != nil {
				panic(err)
			}
			sendRaw(b)
		}
		for {
			var m rawMsg
			if err := st.RecvMsg(&m); err != nil {
				return nil
			}
			req := new(inferencepb.ModelInferRequest)
			if err := proto.Unmarshal(m.b, req); err != nil {
				return err
			}
			ls.mu.Lock()
			ls.reqs = append(ls.reqs, req)
			ls.mu.Unlock()
			if err := answer(req, send, sendRaw); err != nil {
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
	return append([]*inferencepb.ModelInferRequest(nil), ls.reqs...)
}

// tokenResp is one streamed response of request id: a text_output step,
// with ids output ids when ids > 0, final as given.
func tokenResp(id string, ids int, final bool) *inferencepb.ModelStreamInferResponse {
	r := &inferencepb.ModelInferResponse{ModelName: "llm", Id: id,
		Parameters: map[string]*inferencepb.InferParameter{"triton_final_response": {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: final}}},
		Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: "text_output", Datatype: "BYTES", Shape: []int64{1},
			Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte("tok ")}}}}}
	if ids > 0 {
		r.Outputs = append(r.Outputs, &inferencepb.ModelInferResponse_InferOutputTensor{Name: "output_ids", Datatype: "INT32", Shape: []int64{1, int64(ids)},
			Contents: &inferencepb.InferTensorContents{IntContents: make([]int32, ids)}})
	}
	return &inferencepb.ModelStreamInferResponse{InferResponse: r}
}

// emptyFinal is the response Triton sends for
// triton_enable_empty_final_response: no outputs, the final flag.
func emptyFinal(id string) *inferencepb.ModelStreamInferResponse {
	return &inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{ModelName: "llm", Id: id,
		Parameters: map[string]*inferencepb.InferParameter{"triton_final_response": {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: true}}}}}
}

func maxTokens(req *inferencepb.ModelInferRequest) int {
	for _, in := range req.GetInputs() {
		if in.GetName() == "max_tokens" {
			return int(in.GetContents().GetIntContents()[0])
		}
	}
	return 0
}

// streamTokens answers max_tokens one-token responses then an empty final.
func streamTokens(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
	for range maxTokens(req) {
		send(tokenResp(req.GetId(), 0, false))
	}
	send(emptyFinal(req.GetId()))
	return nil
}

// recorder is a genai.Handler that keeps what it was told.
type recorder struct {
	mu     sync.Mutex
	tokens []int
	ends   int
	usage  genai.Usage
	err    error
	after  bool // Tokens after End
	done   chan struct{}
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

func newGenerator(t *testing.T, addr string, conns int, opts grpcclient.GenerateOptions) *grpcclient.Generator {
	t.Helper()
	c, err := grpcclient.New(addr, grpcclient.WithConns(conns), grpcclient.WithEagerConnect(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	g := c.NewGenerator(opts)
	t.Cleanup(func() { g.Close(); c.Close() })
	return g
}

func prompt(text string, max int) *genai.Prompt {
	return &genai.Prompt{Text: text, InputTokens: 1, MaxTokens: max}
}

// Concurrent requests over two streams each get exactly their own tokens,
// one per response, then one End; the requests follow Triton's LLM
// conventions.
func TestGeneratorStreamsTokens(t *testing.T) {
	ls, addr := startLLM(t, streamTokens)
	g := newGenerator(t, addr, 2, grpcclient.GenerateOptions{})
	if err := g.Connect(t.Context()); err != nil {
		t.Fatal(err)
	}
	recs := make([]*recorder, 6)
	for i := range recs {
		recs[i] = newRecorder()
		g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("hello world "+strconv.Itoa(i), i+1), Stream: true, ID: uint64(100 + i)}, recs[i])
	}
	for i, r := range recs {
		r.wait(t)
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		if len(r.tokens) != i+1 {
			t.Errorf("request %d: %d token responses, want %d", i, len(r.tokens), i+1)
		}
		for _, n := range r.tokens {
			if n != 1 {
				t.Errorf("request %d: a response of %d tokens, want 1 (no output_ids)", i, n)
			}
		}
		if r.usage.OutputTokens != 0 {
			t.Errorf("request %d: usage %d tokens, want 0: the server gave no count", i, r.usage.OutputTokens)
		}
	}
	reqs := ls.requests()
	if len(reqs) != 6 {
		t.Fatalf("server saw %d requests, want 6", len(reqs))
	}
	for _, req := range reqs {
		id, err := strconv.Atoi(req.GetId())
		if err != nil || id < 100 || id > 105 {
			t.Fatalf("request id %q, want 100..105", req.GetId())
		}
		checkConventions(t, req, "hello world "+strconv.Itoa(id-100), id-100+1, []int64{1}, false)
	}
}

func checkConventions(t *testing.T, req *inferencepb.ModelInferRequest, text string, max int, shape []int64, ignoreEOS bool) {
	t.Helper()
	if !req.GetParameters()["triton_enable_empty_final_response"].GetBoolParam() {
		t.Error("request does not ask for triton_enable_empty_final_response")
	}
	got := map[string]*inferencepb.ModelInferRequest_InferInputTensor{}
	for _, in := range req.GetInputs() {
		got[in.GetName()] = in
		if len(in.GetShape()) != len(shape) || in.GetShape()[len(shape)-1] != 1 {
			t.Errorf("input %s shape %v, want %v", in.GetName(), in.GetShape(), shape)
		}
	}
	if in := got["text_input"]; in.GetDatatype() != "BYTES" || string(in.GetContents().GetBytesContents()[0]) != text {
		t.Errorf("text_input %v, want BYTES %q", in, text)
	}
	if in := got["max_tokens"]; in.GetDatatype() != "INT32" || int(in.GetContents().GetIntContents()[0]) != max {
		t.Errorf("max_tokens %v, want INT32 %d", in, max)
	}
	if in := got["stream"]; in.GetDatatype() != "BOOL" || !in.GetContents().GetBoolContents()[0] {
		t.Errorf("stream %v, want BOOL true", in)
	}
	if in, ok := got["ignore_eos"]; ok != ignoreEOS || (ok && !in.GetContents().GetBoolContents()[0]) {
		t.Errorf("ignore_eos %v, want sent: %v", in, ignoreEOS)
	}
}

// A batched model's inputs are [1, 1]; ignore_eos goes when declared; a
// response's output_ids are its tokens and their sum the server's count.
func TestGeneratorOutputIDs(t *testing.T) {
	ls, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
		send(tokenResp(req.GetId(), 3, false))
		send(tokenResp(req.GetId(), 2, true)) // the final flag on the last token
		return nil
	})
	g := newGenerator(t, addr, 1, grpcclient.GenerateOptions{Batched: true, Inputs: []string{"text_input", "max_tokens", "stream", "ignore_eos"}})
	r := newRecorder()
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 5), Stream: true, ID: 7}, r)
	r.wait(t)
	if r.err != nil || len(r.tokens) != 2 || r.tokens[0] != 3 || r.tokens[1] != 2 || r.usage.OutputTokens != 5 {
		t.Fatalf("tokens %v usage %+v err %v, want [3 2], 5 from the server, nil", r.tokens, r.usage, r.err)
	}
	checkConventions(t, ls.requests()[0], "p", 5, []int64{1, 1}, true)
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
	g := newGenerator(t, addr, 1, grpcclient.GenerateOptions{OneResponse: true})
	r := newRecorder()
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 4), ID: 1}, r)
	r.wait(t)
	if r.err != nil || len(r.tokens) != 1 {
		t.Fatalf("tokens %v err %v, want one response, no error", r.tokens, r.err)
	}
}

// Every malformed answer fails its request with a named error, never a
// success and never a hang; the failures that break the stream fail what
// is in flight on it, and the next request opens a new stream.
func TestGeneratorMalformed(t *testing.T) {
	tests := []struct {
		name      string
		answer    llmAnswer
		stream    bool // want genai.ErrStream and kserve.ErrMalformed
		server    bool // want the server's *kserve.Error
		transport bool // want kserve.ErrTransport
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
		{name: "response for an unknown request", stream: true, answer: func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			send(tokenResp("999999", 0, false))
			return nil
		}},
		{name: "response with a non-numeric id", stream: true, answer: func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			send(tokenResp("abc", 0, true))
			return nil
		}},
		{name: "bytes that are not a response", stream: true, answer: func(_ *inferencepb.ModelInferRequest, _ func(*inferencepb.ModelStreamInferResponse), raw func([]byte)) error {
			raw([]byte{0xff, 0xff, 0xff})
			return nil
		}},
		{name: "negative output dimension", stream: true, answer: func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), _ func([]byte)) error {
			r := tokenResp(req.GetId(), 0, false)
			r.InferResponse.Outputs[0].Shape = []int64{-1}
			send(r)
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
			first := true
			_, addr := startLLM(t, func(req *inferencepb.ModelInferRequest, send func(*inferencepb.ModelStreamInferResponse), raw func([]byte)) error {
				if first {
					first = false
					return tc.answer(req, send, raw)
				}
				return streamTokens(req, send, raw)
			})
			g := newGenerator(t, addr, 1, grpcclient.GenerateOptions{})
			r := newRecorder()
			g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 3), Stream: true, ID: 1}, r)
			r.wait(t)
			if r.err == nil {
				t.Fatal("a malformed answer succeeded")
			}
			if got := errors.Is(r.err, genai.ErrStream) && errors.Is(r.err, kserve.ErrMalformed); got != tc.stream {
				t.Errorf("err %v: malformed stream %v, want %v", r.err, got, tc.stream)
			}
			_, isServer := errors.AsType[*kserve.Error](r.err)
			if isServer != tc.server {
				t.Errorf("err %v: the server's error %v, want %v", r.err, isServer, tc.server)
			}
			if r.after || r.ends != 1 {
				t.Errorf("End called %d times, tokens after End %v", r.ends, r.after)
			}
			// The generator recovers: a new request on a new stream succeeds.
			next := newRecorder()
			g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 2), Stream: true, ID: 2}, next)
			next.wait(t)
			if next.err != nil || len(next.tokens) != 2 {
				t.Fatalf("after the failure: tokens %v err %v, want 2 and no error", next.tokens, next.err)
			}
		})
	}
}

// A server that never answers does not hang a request: its context's end
// ends it, and Close ends the rest.
func TestGeneratorStalledServer(t *testing.T) {
	_, addr := startLLM(t, func(*inferencepb.ModelInferRequest, func(*inferencepb.ModelStreamInferResponse), func([]byte)) error {
		return nil // no answer, ever
	})
	c, err := grpcclient.New(addr, grpcclient.WithConns(1), grpcclient.WithEagerConnect(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g := c.NewGenerator(grpcclient.GenerateOptions{})
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
	if open.err == nil {
		t.Error("a request in flight at Close succeeded")
	}
	late := newRecorder()
	g.Generate(t.Context(), &genai.Request{Model: "llm", Prompt: prompt("p", 3), ID: 3}, late)
	late.wait(t)
	if late.err == nil {
		t.Error("a request after Close succeeded")
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
	g := newGenerator(t, addr, 1, grpcclient.GenerateOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	first := newRecorder()
	g.Generate(ctx, &genai.Request{Model: "llm", Prompt: prompt("p", 3), Stream: true, ID: 1}, first)
	cancel()
	first.wait(t)
	if !errors.Is(first.err, context.Canceled) {
		t.Fatalf("cancelled request: %v, want context.Canceled", first.err)
	}
	close(release)
	// The server answers request 1 in full before it reads request 2.
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

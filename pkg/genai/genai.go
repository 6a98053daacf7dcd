// Package genai is the vocabulary of generative (LLM) load: the protocols a
// generative endpoint speaks, the prompts a run sends, the laws that draw
// their lengths, the user's service-level objectives, and the interface
// between a generative client and the SUT that times its tokens. It imports
// no client and no engine: the clients (kserve/genclient), the SUT adapter
// (pkg/sut) and the settings builder (pkg/runspec) all meet here.
package genai

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// API is the protocol of a generative endpoint (`--api`, the spec's `api`).
type API string

// The APIs; "" is what the probe finds.
const (
	// APIKServeStream is KServe v2 gRPC ModelStreamInfer with Triton's LLM
	// conventions (text_input, max_tokens, stream; text_output, output_ids):
	// one request, many responses, the last carrying triton_final_response.
	APIKServeStream API = "kserve-stream"
	// APIGenerate is Triton's HTTP generate extension, one JSON answer:
	// POST /v2/models/{model}/generate.
	APIGenerate API = "generate"
	// APIGenerateStream is the same streamed as server-sent events:
	// POST /v2/models/{model}/generate_stream.
	APIGenerateStream API = "generate-stream"
	// APIOpenAICompletions is POST /v1/completions (stream: true, SSE).
	APIOpenAICompletions API = "openai-completions"
	// APIOpenAIChat is POST /v1/chat/completions (stream: true, SSE).
	APIOpenAIChat API = "openai-chat"
)

// APIs lists every API, in the order help text shows them.
func APIs() []API {
	return []API{APIKServeStream, APIGenerate, APIGenerateStream, APIOpenAICompletions, APIOpenAIChat}
}

// ErrAPI is an --api (the spec's api) that names no API.
var ErrAPI = errors.New("api")

// ParseAPI reads an --api value; "" is what the probe finds.
func ParseAPI(v string) (API, error) {
	if v == "" {
		return "", nil
	}
	for _, a := range APIs() {
		if string(a) == v {
			return a, nil
		}
	}
	names := make([]string, 0, len(APIs()))
	for _, a := range APIs() {
		names = append(names, string(a))
	}
	return "", fmt.Errorf("%w: %q is not one of %s (or leave it out: the probe finds it)", ErrAPI, v, strings.Join(names, ", "))
}

// GRPC says whether the API is spoken over gRPC (a grpc:// or grpcs://
// target); the others are HTTP.
func (a API) GRPC() bool { return a == APIKServeStream }

// Message is one turn of a chat prompt.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Prompt is one sample of a generative run: what is sent, and how long it
// is. Exactly one of Text and Messages is set (Messages for a chat data
// set; a chat API sends Text as one user message, a completions API sends
// Messages' contents joined).
type Prompt struct {
	Text     string
	Messages []Message
	// InputTokens is the prompt's length in the project's pseudo-tokens
	// (CountTokens), or the data set's own count when it gives one.
	InputTokens int
	// MaxTokens is the output length asked for (max_tokens; with
	// ignore_eos / min_tokens where the server takes them, so that the
	// answer is that long).
	MaxTokens int
}

// Request is one generative request as a client sends it.
type Request struct {
	Model   string
	Version string
	Prompt  *Prompt
	// Stream asks for the answer token by token (SSE, or a decoupled
	// model's responses); false is one answer at the end.
	Stream bool
	// ID is unique within the run (the sample's sequence number): the
	// request's id where the protocol carries one.
	ID uint64
	// Capture asks the client to give the answer's content to the
	// handler, when it is a ContentHandler (accuracy mode's log).
	Capture bool
}

// Usage is what the server said the answer held, when it said.
type Usage struct {
	// OutputTokens is usage.completion_tokens or len(output_ids) summed
	// over the responses; 0 when the server gave neither.
	OutputTokens int
	// InputTokens is usage.prompt_tokens; 0 when not given.
	InputTokens int
}

// MaxTokensPerResponse is the most output tokens one token-bearing
// response of a streamed answer is believed to carry. A stream's events
// may carry several tokens each (speculative decoding accepts a few at a
// step; a server's stream interval batches steps; a detokenizer holds back
// an incomplete character), so fewer events than claimed tokens is normal;
// 64 leaves room for all of these, while a claim beyond it is no longer a
// count of what was streamed.
const MaxTokensPerResponse = 64

// BelievedTokens is an answer's output token count given what the server
// claimed (usage.completion_tokens or output_ids summed; 0: no claim),
// the token-bearing responses received, and the max_tokens asked (0: not
// asked). The claim is believed (ok) unless it is more than max_tokens
// (no server may generate more), fewer than the responses (each carried
// at least one token), or, for a streamed answer (two responses or more),
// more than MaxTokensPerResponse per response; otherwise the count is the
// responses, one token each, as for a server that claims nothing.
func BelievedTokens(claimed, responses, maxTokens int) (n int, ok bool) {
	switch {
	case claimed <= 0:
		return responses, true
	case maxTokens > 0 && claimed > maxTokens,
		claimed < responses,
		responses >= 2 && claimed > responses*MaxTokensPerResponse:
		return responses, false
	}
	return claimed, true
}

// Handler receives one request's answer as it arrives, from the client's
// goroutine. Times are when the response's bytes arrived (the kernel's
// receive time where the client has it), on the wall clock. A client calls
// Tokens for every response that carries output (n ≥ 1: the tokens it
// holds when the server says, else 1), then End exactly once; an answer
// that ends without one such response ends with ErrNoOutputTokens.
type Handler interface {
	Tokens(at time.Time, n int)
	// End: the answer is complete (err nil) or failed (err wraps one of the
	// kserve error kinds or ErrStream). usage is what the server reported.
	End(at time.Time, usage Usage, err error)
}

// ContentHandler is a Handler that takes the answer's content, when the
// request asked for it (Request.Capture): each token-bearing response's
// output token ids when the server gives them (Triton's output_ids), and
// its text (text_output, an OpenAI choice's text or content), called just
// before that response's Tokens.
type ContentHandler interface {
	Content(text []byte, ids []int64)
}

// Client sends generative requests. Generate must not block on the
// network: it hands the request to the client's own goroutines (or an event
// loop) and returns; h is called as the answer arrives. A cancelled ctx ends
// the request with End(err).
type Client interface {
	Generate(ctx context.Context, req *Request, h Handler)
	Close() error
}

// ErrStream is a malformed stream: bad SSE framing, an error event in the
// middle of an answer, a stream that ends without its final response, a
// response for a request that was not sent. The sample fails (outcome
// malformed).
var ErrStream = errors.New("genai: malformed stream")

// ErrNoOutputTokens is an answer that ended without one token-bearing
// response (a 200 event stream closed at once, only empty deltas before
// [DONE], a final response with no output): the server answered nothing,
// so the sample fails (outcome malformed) rather than completing with 0
// tokens. It wraps ErrStream; a client wraps it with its malformed kind.
var ErrNoOutputTokens = fmt.Errorf("%w: no output tokens", ErrStream)

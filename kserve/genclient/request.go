package genclient

// The request bodies of the four APIs.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/genai"
)

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// openAIBody is the body of /v1/completions and /v1/chat/completions.
// ignore_eos and min_tokens are vLLM's (and sglang's, TensorRT-LLM's
// OpenAI front end's) way to have exactly max_tokens generated.
type openAIBody struct {
	Model         string          `json:"model"`
	Prompt        *string         `json:"prompt,omitempty"`
	Messages      []genai.Message `json:"messages,omitempty"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options,omitempty"`
	IgnoreEOS     bool            `json:"ignore_eos,omitempty"`
	MinTokens     int             `json:"min_tokens,omitempty"`
}

// tritonBody is the body of Triton's generate extension: the model's
// inputs by name, with the LLM conventions (text_input, max_tokens, stream,
// ignore_eos) that TensorRT-LLM's and vLLM's Triton backends take.
type tritonBody struct {
	TextInput string `json:"text_input"`
	MaxTokens int    `json:"max_tokens,omitempty"`
	Stream    bool   `json:"stream"`
	IgnoreEOS bool   `json:"ignore_eos,omitempty"`
}

// path is the request's path under the base URL's prefix.
func (c *Client) path(req *genai.Request) string {
	switch c.api {
	case genai.APIOpenAICompletions:
		return "/v1/completions"
	case genai.APIOpenAIChat:
		return "/v1/chat/completions"
	}
	p := "/v2/models/" + url.PathEscape(req.Model)
	if req.Version != "" {
		p += "/versions/" + url.PathEscape(req.Version)
	}
	if c.api == genai.APIGenerateStream {
		return p + "/generate_stream"
	}
	return p + "/generate"
}

// stream says whether the request asks for a streamed answer: always for
// generate-stream, never for generate, req.Stream for OpenAI.
func (c *Client) stream(req *genai.Request) bool {
	switch c.api {
	case genai.APIGenerateStream:
		return true
	case genai.APIGenerate:
		return false
	}
	return req.Stream
}

// body encodes req's body; usage asks for stream_options.include_usage.
func (c *Client) body(req *genai.Request, usage bool) ([]byte, error) {
	p := req.Prompt
	if p == nil {
		return nil, fmt.Errorf("genclient: request %d has no prompt", req.ID)
	}
	stream := c.stream(req)
	switch c.api {
	case genai.APIGenerate, genai.APIGenerateStream:
		if req.Model == "" {
			return nil, fmt.Errorf("genclient: request %d has no model: Triton's generate needs one", req.ID)
		}
		return json.Marshal(tritonBody{TextInput: promptText(p), MaxTokens: p.MaxTokens, Stream: stream, IgnoreEOS: c.o.IgnoreEOS})
	}
	b := openAIBody{Model: req.Model, MaxTokens: p.MaxTokens, Stream: stream, IgnoreEOS: c.o.IgnoreEOS}
	if c.o.IgnoreEOS {
		b.MinTokens = p.MaxTokens
	}
	if stream && usage {
		b.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if c.api == genai.APIOpenAIChat {
		b.Messages = p.Messages
		if len(b.Messages) == 0 {
			b.Messages = []genai.Message{{Role: "user", Content: p.Text}}
		}
	} else {
		text := promptText(p)
		b.Prompt = &text
	}
	return json.Marshal(b)
}

// promptText is the prompt as one text: a chat prompt's contents joined
// by newlines for an API that takes text.
func promptText(p *genai.Prompt) string {
	if len(p.Messages) == 0 {
		return p.Text
	}
	parts := make([]string, len(p.Messages))
	for i, m := range p.Messages {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}

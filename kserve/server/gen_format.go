package server

// This file renders generative answers in each HTTP protocol's JSON: an
// SSE event per token (appended to a reused buffer: the per-request parts,
// which a client may choose, are JSON-escaped once per request; a token's
// text is the model's own ASCII), and the whole answer for a non-streamed
// request.

import (
	"encoding/json"
	"strconv"
)

// genUsage is what an answer held, in tokens.
type genUsage struct{ in, out int }

// genFormat is one protocol's rendering.
type genFormat interface {
	// token appends one token's whole SSE event (first: chat's role
	// chunk goes before it).
	token(b []byte, tok GenToken, first bool) []byte
	// tail appends the events after the last token (a usage chunk,
	// `data: [DONE]`); final false leaves out the end marker (fault
	// no_final).
	tail(b []byte, u genUsage, final bool) []byte
	// errorEvent appends an error event in the middle of an answer.
	errorEvent(b []byte, msg string) []byte
	// whole is a non-streamed answer's body.
	whole(text []byte, ids []int32, reason string, u genUsage) []byte
}

// jsonString is s as a JSON string.
func jsonString(s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// appendASCIIString appends s, the model's own token text (printable
// ASCII without quotes or backslashes), as a JSON string.
func appendASCIIString(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// tritonFormat is Triton's generate extension: one JSON object per event,
// keyed by output name; no end marker (the stream's end is the end).
type tritonFormat struct {
	head []byte // {"id":...,"model_name":...,"model_version":...,
}

func newTritonFormat(model, version, id string) *tritonFormat {
	var b []byte
	b = append(b, '{')
	if id != "" {
		b = append(append(append(b, `"id":`...), jsonString(id)...), ',')
	}
	b = append(append(b, `"model_name":`...), jsonString(model)...)
	b = append(append(append(b, `,"model_version":`...), jsonString(version)...), ',')
	return &tritonFormat{head: b}
}

func (f *tritonFormat) token(b []byte, tok GenToken, _ bool) []byte {
	b = append(b, "data: "...)
	b = append(b, f.head...)
	b = appendASCIIString(append(b, `"text_output":`...), tok.Text)
	b = strconv.AppendInt(append(b, `,"output_ids":[`...), int64(tok.ID), 10)
	return append(b, "]}\n\n"...)
}

func (f *tritonFormat) tail(b []byte, _ genUsage, _ bool) []byte { return b }

func (f *tritonFormat) errorEvent(b []byte, msg string) []byte {
	b = append(append(b, `data: {"error":`...), jsonString(msg)...)
	return append(b, "}\n\n"...)
}

func (f *tritonFormat) whole(text []byte, ids []int32, _ string, _ genUsage) []byte {
	b := append([]byte(nil), f.head...)
	b = append(append(b, `"text_output":`...), jsonString(string(text))...)
	b = append(b, `,"output_ids":[`...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return append(b, "]}"...)
}

// openAIFormat is the OpenAI-compatible API's completions or chat
// completions, as vLLM answers them.
type openAIFormat struct {
	chat         bool
	includeUsage bool   // stream_options.include_usage
	head         []byte // {"id":...,"object":...,"created":...,"model":...,
}

func newOpenAIFormat(chat, stream, includeUsage bool, id, model string, created int64) *openAIFormat {
	object := "text_completion"
	switch {
	case chat && stream:
		object = "chat.completion.chunk"
	case chat:
		object = "chat.completion"
	}
	b := append(append([]byte(`{"id":`), jsonString(id)...), `,"object":"`...)
	b = strconv.AppendInt(append(append(b, object...), `","created":`...), created, 10)
	b = append(append(append(b, `,"model":`...), jsonString(model)...), ',')
	return &openAIFormat{chat: chat, includeUsage: includeUsage, head: b}
}

func (f *openAIFormat) usageNull(b []byte) []byte {
	if f.includeUsage {
		b = append(b, `,"usage":null`...)
	}
	return b
}

func (f *openAIFormat) token(b []byte, tok GenToken, first bool) []byte {
	if f.chat && first {
		// vLLM's first chunk names the role and carries no text: a client
		// must not take it for the first token.
		b = append(append(b, "data: "...), f.head...)
		b = append(b, `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]`...)
		b = append(f.usageNull(b), "}\n\n"...)
	}
	b = append(append(b, "data: "...), f.head...)
	if f.chat {
		b = appendASCIIString(append(b, `"choices":[{"index":0,"delta":{"content":`...), tok.Text)
		b = append(b, `},"logprobs":null,"finish_reason":`...)
	} else {
		b = appendASCIIString(append(b, `"choices":[{"index":0,"text":`...), tok.Text)
		b = append(b, `,"logprobs":null,"finish_reason":`...)
	}
	if tok.Last {
		b = appendASCIIString(b, tok.Reason)
	} else {
		b = append(b, "null"...)
	}
	return append(f.usageNull(append(b, "}]"...)), "}\n\n"...)
}

func appendUsage(b []byte, u genUsage) []byte {
	b = strconv.AppendInt(append(b, `"usage":{"prompt_tokens":`...), int64(u.in), 10)
	b = strconv.AppendInt(append(b, `,"completion_tokens":`...), int64(u.out), 10)
	b = strconv.AppendInt(append(b, `,"total_tokens":`...), int64(u.in+u.out), 10)
	return append(b, '}')
}

func (f *openAIFormat) tail(b []byte, u genUsage, final bool) []byte {
	if !final {
		return b
	}
	if f.includeUsage {
		b = append(append(b, "data: "...), f.head...)
		b = appendUsage(append(b, `"choices":[],`...), u)
		b = append(b, "}\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...)
}

func (f *openAIFormat) errorEvent(b []byte, msg string) []byte {
	b = append(append(b, `data: {"error":{"message":`...), jsonString(msg)...)
	return append(b, `,"type":"InternalServerError","code":500}}`+"\n\n"...)
}

func (f *openAIFormat) whole(text []byte, _ []int32, reason string, u genUsage) []byte {
	b := append([]byte(nil), f.head...)
	if f.chat {
		b = append(b, `"choices":[{"index":0,"message":{"role":"assistant","content":`...)
		b = append(append(b, jsonString(string(text))...), '}')
	} else {
		b = append(append(b, `"choices":[{"index":0,"text":`...), jsonString(string(text))...)
	}
	b = appendASCIIString(append(b, `,"logprobs":null,"finish_reason":`...), reason)
	return append(appendUsage(append(b, "}],"...), u), '}')
}

package server

// This file is the interface between the generative front ends (Triton's
// decoupled ModelStreamInfer, its HTTP generate extension, the
// OpenAI-compatible API) and a Backend that serves generative models.

import (
	"context"
	"time"
)

// Generator is a Backend that also serves generative (LLM) models. The
// front ends serve them when the Backend implements it.
type Generator interface {
	// GenerativeModels lists the generative models (GET /v1/models).
	GenerativeModels(ctx context.Context) []string
	// Generative says whether model is one of them (ModelStreamInfer then
	// answers it token by token, as a decoupled model).
	Generative(ctx context.Context, model string) bool
	// Generate starts one request. Its error is a *kserve.Error (an
	// unknown model, a bad argument, a model that is not generative).
	Generate(ctx context.Context, req *GenRequest) (GenStream, error)
}

// GenRequest is one generative request, whatever protocol carried it.
type GenRequest struct {
	Model, Version string
	// ID is the request's id where the protocol carries one (gRPC's id,
	// the generate extension's "id", OpenAI's X-Request-Id header).
	ID     string
	Prompt string
	// MaxTokens is the output length asked; 0: the model's default.
	MaxTokens int
	// IgnoreEOS (or min_tokens ≥ max_tokens) asks for exactly MaxTokens.
	IgnoreEOS bool
	// Arrival is when the request reached this host's kernel, when known
	// (zero otherwise): the model's time starts there.
	Arrival time.Time
}

// GenToken is one token of an answer.
type GenToken struct {
	Text string
	ID   int32
	// Index counts the answer's tokens from 0.
	Index int
	// Last marks the answer's final token; Reason then says why it ended:
	// "length" (max_tokens reached) or "stop" (the model's own end).
	Last   bool
	Reason string
}

// GenStream is one request's answer, token by token.
type GenStream interface {
	// Next waits for the next token. At the end it answers ok false, with
	// err nil after the last token, or the failure.
	Next(ctx context.Context) (tok GenToken, ok bool, err error)
	// InputTokens is the prompt's length as the model counted it.
	InputTokens() int
	// Fault is the test-only malformed answer the front end must give
	// after the first token (Fault* constants), or "".
	Fault() string
	// Close ends the request: a running one is cancelled.
	Close()
}

// Test-only malformed answers, so that clients can be tested against them.
// Each is given after the answer's first token.
const (
	// FaultBadFraming: SSE that is not SSE (an event cut off without its
	// blank line, the connection then closed); over gRPC a response
	// without text_output.
	FaultBadFraming = "bad_framing"
	// FaultErrorMid: an error event (SSE `data: {"error": ...}`, a gRPC
	// response with error_message) in the middle of the answer.
	FaultErrorMid = "error_mid"
	// FaultNoFinal: the answer stops without its end (no `data: [DONE]`;
	// the HTTP body cut off; the gRPC stream closed without a response
	// carrying triton_final_response=true).
	FaultNoFinal = "no_final"
	// FaultUnknownID: over gRPC, the rest of the answer carries an id no
	// request had.
	FaultUnknownID = "unknown_id"
	// FaultNoStreamOptions is not a malformed answer but an older
	// server: an OpenAI request with stream_options gets a 400 naming
	// it (as servers that do not know the field answer).
	FaultNoStreamOptions = "no_stream_options"
)

// Emission is one token as a front end sent it: the model, the request's
// id (GenRequest.ID, else the id the front end gave the answer), the
// token's index and when it was sent: just before the socket write of the
// bytes that complete it when the server is served on an EmitListener,
// else when its bytes were handed to the connection's writer.
type Emission struct {
	Model string
	ID    string
	Index int
	Last  bool
	At    time.Time
}

// EmitFunc is told of every token sent (sutproxy's emission record, for
// tests that compare a client's token times with the server's). It runs
// on the serving goroutine: it must be quick and safe for concurrent use.
type EmitFunc func(Emission)

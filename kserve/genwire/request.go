package genwire

// This file encodes a generative request as a ModelInferRequest, straight
// into the caller's buffer: the protobuf runtime would build a message of
// maps, tensors and slices per request only to serialise it.

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// Triton's LLM input names.
const (
	TextInput          = "text_input"
	MaxTokens          = "max_tokens"
	Stream             = "stream"
	IgnoreEOS          = "ignore_eos"
	SamplingParameters = "sampling_parameters"
	// EmptyFinal asks a decoupled model's server for a response carrying
	// triton_final_response even when the model ends a request without
	// one.
	EmptyFinal = "triton_enable_empty_final_response"
)

// Options shape a generative client's requests to the model (read from its
// configuration by the caller).
type Options struct {
	// Batched: the model has a batch dimension (max_batch_size > 0), so
	// every input has shape [1, 1] rather than [1].
	Batched bool
	// Inputs are the names of the model's inputs (its configuration's);
	// the optional ones (max_tokens, stream, ignore_eos,
	// sampling_parameters) are sent only when named, as Triton refuses an
	// input a model does not declare. Nil sends max_tokens and stream,
	// TensorRT-LLM's ensemble's.
	Inputs []string
	// OneResponse: the model is not decoupled; its one response to a
	// request is the last.
	OneResponse bool
}

// Declares says whether the optional input name is sent.
func (o *Options) Declares(name string) bool {
	if o.Inputs == nil {
		return name == MaxTokens || name == Stream
	}
	return slices.Contains(o.Inputs, name)
}

// PromptText is what a completion-style API sends of p: its text, or its
// messages' contents one per line.
func PromptText(p *genai.Prompt) string {
	if p.Messages == nil {
		return p.Text
	}
	return string(appendPrompt(nil, p))
}

// appendPrompt appends PromptText(p) to b.
func appendPrompt(b []byte, p *genai.Prompt) []byte {
	if p.Messages == nil {
		return append(b, p.Text...)
	}
	for i, m := range p.Messages {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, m.Content...)
	}
	return b
}

// CheckRequest refuses a request that cannot be encoded; the error is a
// *kserve.Error with code InvalidArgument.
func CheckRequest(req *genai.Request) error {
	if req.Prompt == nil {
		return &kserve.Error{Code: codes.InvalidArgument, Message: "generative request without a prompt"}
	}
	if req.Prompt.MaxTokens < 0 || req.Prompt.MaxTokens > math.MaxInt32 {
		return &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("max_tokens %d out of INT32's range", req.Prompt.MaxTokens)}
	}
	return nil
}

// ModelInferRequest's fields, and those of its parts.
const (
	reqModelName    = 1
	reqModelVersion = 2
	reqID           = 3
	reqParameters   = 4
	reqInputs       = 5

	inName     = 1
	inDatatype = 2
	inShape    = 3
	inContents = 5

	contentsBool  = 1
	contentsInt   = 2
	contentsBytes = 8

	mapKey   = 1
	mapValue = 2

	paramBool = 1
)

// AppendRequest appends req, encoded as a ModelInferRequest shaped by o, to
// b: the message grpcclient's Generator and grpcloop's send. It allocates
// nothing once b has room. Its error is CheckRequest's.
func AppendRequest(b []byte, o *Options, req *genai.Request) ([]byte, error) {
	if err := CheckRequest(req); err != nil {
		return b, err
	}
	b = appendString(b, reqModelName, req.Model)
	b = appendString(b, reqModelVersion, req.Version)
	b = protowire.AppendTag(b, reqID, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(decimalLen(req.ID)))
	b = strconv.AppendUint(b, req.ID, 10)
	if !o.OneResponse {
		var m, v int
		b, m = beginLen(b, reqParameters)
		b = appendString(b, mapKey, EmptyFinal)
		b, v = beginLen(b, mapValue)
		b = protowire.AppendTag(b, paramBool, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
		b = endLen(endLen(b, v), m)
	}
	return appendInputs(b, o, req), nil
}

// appendInputs appends the request's input tensors.
func appendInputs(b []byte, o *Options, req *genai.Request) []byte {
	p := req.Prompt
	var in, c, s int
	b, in, c = beginInput(b, o, TextInput, "BYTES")
	b, s = beginLen(b, contentsBytes)
	b = endInput(endLen(appendPrompt(b, p), s), in, c)
	if o.Declares(MaxTokens) && p.MaxTokens > 0 {
		b = appendScalar(b, o, MaxTokens, "INT32", contentsInt, uint64(p.MaxTokens))
	}
	if o.Declares(Stream) {
		b = appendScalar(b, o, Stream, "BOOL", contentsBool, boolVarint(req.Stream))
	}
	if o.Declares(IgnoreEOS) {
		// The answer is as long as asked: output lengths are the run's.
		b = appendScalar(b, o, IgnoreEOS, "BOOL", contentsBool, 1)
	}
	if o.Declares(SamplingParameters) {
		// vLLM's backend takes its sampling settings as one JSON string
		// (the keys in encoding/json's order for a map).
		b, in, c = beginInput(b, o, SamplingParameters, "BYTES")
		b, s = beginLen(b, contentsBytes)
		b = append(b, `{"ignore_eos":true`...)
		if p.MaxTokens > 0 {
			b = strconv.AppendInt(append(b, `,"max_tokens":`...), int64(p.MaxTokens), 10)
			b = strconv.AppendInt(append(b, `,"min_tokens":`...), int64(p.MaxTokens), 10)
		}
		b = endInput(endLen(append(b, '}'), s), in, c)
	}
	return b
}

// beginInput starts an InferInputTensor and its contents; endInput ends
// both.
func beginInput(b []byte, o *Options, name, datatype string) ([]byte, int, int) {
	b, in := beginLen(b, reqInputs)
	b = appendString(b, inName, name)
	b = appendString(b, inDatatype, datatype)
	b = protowire.AppendTag(b, inShape, protowire.BytesType)
	if o.Batched {
		b = append(b, 2, 1, 1)
	} else {
		b = append(b, 1, 1)
	}
	b, c := beginLen(b, inContents)
	return b, in, c
}

func endInput(b []byte, in, c int) []byte { return endLen(endLen(b, c), in) }

// appendScalar appends an input of one element, a packed varint.
func appendScalar(b []byte, o *Options, name, datatype string, field protowire.Number, v uint64) []byte {
	b, in, c := beginInput(b, o, name, datatype)
	b = protowire.AppendTag(b, field, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(protowire.SizeVarint(v)))
	b = protowire.AppendVarint(b, v)
	return endInput(b, in, c)
}

func boolVarint(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// appendString appends a string field, left out when empty (proto3).
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// beginLen starts a length-delimited field whose length is not known yet:
// its content goes from the returned offset, and endLen puts the length
// in front of it.
func beginLen(b []byte, num protowire.Number) ([]byte, int) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return b, len(b)
}

// endLen inserts the length of the content from start, moving the content
// up by the length's size (a copy within b: no allocation once b has room).
func endLen(b []byte, start int) []byte {
	n := len(b) - start
	k := protowire.SizeVarint(uint64(n))
	var pad [binaryMaxVarint]byte
	b = append(b, pad[:k]...)
	copy(b[start+k:], b[start:start+n])
	protowire.AppendVarint(b[start:start], uint64(n))
	return b
}

const binaryMaxVarint = 10

// decimalLen is the number of decimal digits of v.
func decimalLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

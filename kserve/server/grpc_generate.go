package server

// This file answers generative models on ModelStreamInfer as Triton answers
// a decoupled model with its LLM conventions (TensorRT-LLM's and vLLM's
// backends): inputs text_input (BYTES), max_tokens (INT32), stream (BOOL),
// ignore_eos (BOOL), min_tokens; with stream true one response per token
// (text_output, output_ids), else one response with the whole answer; every
// response carries the parameter triton_final_response, true on the last.

import (
	"context"
	"encoding/binary"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// ParamFinalResponse is the response parameter that ends a decoupled
// model's answer to one request.
const ParamFinalResponse = "triton_final_response"

// genRequestFromInfer reads Triton's LLM inputs (and the same names as
// parameters, as the vLLM backend's sampling parameters give them).
func genRequestFromInfer(req *kserve.InferRequest) (GenRequest, bool, error) {
	g := GenRequest{Model: req.Model, Version: req.Version, ID: req.ID}
	var stream, haveText bool
	var minTokens int
	for _, in := range req.Inputs {
		switch in.Name {
		case "text_input":
			els, err := kserve.BytesElements(in.Data)
			if err != nil || in.Datatype != kserve.Bytes || len(els) == 0 {
				return g, false, kserve.Errorf(codes.InvalidArgument, "input text_input: want one BYTES element")
			}
			g.Prompt, haveText = string(els[0]), true
		case "max_tokens", "min_tokens":
			v, err := kserve.Int64s(in.Datatype, in.Data)
			if err != nil || len(v) == 0 {
				return g, false, kserve.Errorf(codes.InvalidArgument, "input %s: want one integer (INT32)", in.Name)
			}
			if in.Name == "max_tokens" {
				g.MaxTokens = int(v[0])
			} else {
				minTokens = int(v[0])
			}
		case "stream", "ignore_eos":
			v := kserve.Bools(in.Data)
			if in.Datatype != kserve.Bool || len(v) == 0 {
				return g, false, kserve.Errorf(codes.InvalidArgument, "input %s: want one BOOL", in.Name)
			}
			if in.Name == "stream" {
				stream = v[0]
			} else {
				g.IgnoreEOS = v[0]
			}
		}
	}
	if !haveText {
		return g, false, kserve.Errorf(codes.InvalidArgument, "input text_input (BYTES) is required by generative model %q", req.Model)
	}
	if v, ok := req.Parameters["max_tokens"].(int64); ok && g.MaxTokens == 0 {
		g.MaxTokens = int(v)
	}
	if v, ok := req.Parameters["ignore_eos"].(bool); ok {
		g.IgnoreEOS = g.IgnoreEOS || v
	}
	if v, ok := req.Parameters["min_tokens"].(int64); ok {
		minTokens = max(minTokens, int(v))
	}
	g.IgnoreEOS = g.IgnoreEOS || minCovers(minTokens, g.MaxTokens)
	return g, stream, nil
}

// genResponse is one response of a decoupled answer.
func genResponse(model, version, id string, text []byte, ids []int32, final bool) *inferencepb.ModelStreamInferResponse {
	textRaw := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(text)), uint32(len(text)))
	textRaw = append(textRaw, text...)
	idsRaw := make([]byte, 0, 4*len(ids))
	for _, v := range ids {
		idsRaw = binary.LittleEndian.AppendUint32(idsRaw, uint32(v))
	}
	return &inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{
		ModelName: model, ModelVersion: version, Id: id,
		Parameters: map[string]*inferencepb.InferParameter{
			ParamFinalResponse: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: final}},
		},
		Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{
			{Name: "text_output", Datatype: string(kserve.Bytes), Shape: []int64{1}},
			{Name: "output_ids", Datatype: string(kserve.Int32), Shape: []int64{int64(len(ids))}},
		},
		RawOutputContents: [][]byte{textRaw, idsRaw},
	}}
}

// streamError is a failed request's response on a stream: its error and
// the request's model and id, so the client can tell which one failed.
func streamError(model, version, id, msg string) *inferencepb.ModelStreamInferResponse {
	return &inferencepb.ModelStreamInferResponse{
		ErrorMessage:  msg,
		InferResponse: &inferencepb.ModelInferResponse{ModelName: model, ModelVersion: version, Id: id},
	}
}

// streamGenerate answers one generative request on a stream.
func (s *grpcService) streamGenerate(ctx context.Context, g Generator, m *inferencepb.ModelInferRequest, x *streamState) {
	start := s.begin()
	model, version, id := m.GetModelName(), m.GetModelVersion(), m.GetId()
	fail := func(err error) {
		err = grpcStatus(err)
		s.done("ModelStreamInfer", model, start, err)
		x.send(streamError(model, version, id, status.Convert(err).Message()))
	}
	req, err := kserve.InferRequestFromPB(m)
	if err != nil {
		fail(err)
		return
	}
	gr, stream, err := genRequestFromInfer(req)
	if err != nil {
		fail(err)
		return
	}
	if s.arrival != nil {
		gr.Arrival = s.arrival(ctx)
	}
	st, err := g.Generate(ctx, &gr)
	if err != nil {
		fail(err)
		return
	}
	defer st.Close()
	if version == "" {
		version = "1"
	}
	if stream {
		err = s.genTokens(ctx, st, x, model, version, id)
	} else {
		err = s.genWhole(ctx, st, x, model, version, id)
	}
	if err != nil {
		fail(err)
		return
	}
	s.done("ModelStreamInfer", model, start, nil)
}

// genTokens sends a response per token as the model produces it.
func (s *grpcService) genTokens(ctx context.Context, st GenStream, x *streamState, model, version, id string) error {
	var text []byte
	var ids [1]int32
	for {
		tok, ok, err := st.Next(ctx)
		if err != nil || !ok {
			return err
		}
		text = append(text[:0], tok.Text...)
		ids[0] = tok.ID
		if x.wire != nil {
			x.wire.expect(id, Emission{Model: model, ID: id, Index: tok.Index, Last: tok.Last})
		}
		if !x.send(genResponse(model, version, id, text, ids[:], tok.Last)) {
			return nil // the stream is over
		}
		if x.wire == nil {
			s.emitToken(model, id, tok)
		}
		if tok.Index == 0 && st.Fault() != "" && s.streamFault(x, st.Fault(), model, version, &id) {
			return nil
		}
	}
}

// streamFault gives a test-only malformed answer after the first token;
// false when the answer goes on (unknown_id: with another id).
func (s *grpcService) streamFault(x *streamState, fault, model, version string, id *string) bool {
	switch fault {
	case FaultBadFraming:
		x.send(&inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{
			ModelName: model, ModelVersion: version, Id: *id}}) // no text_output
	case FaultErrorMid:
		x.send(streamError(model, version, *id, faultMessage))
	case FaultNoFinal:
		x.finish()
	case FaultUnknownID:
		*id = "sutproxy-unknown-" + *id
		return false
	default:
		return false
	}
	return true
}

// genWhole sends the whole answer as one final response.
func (s *grpcService) genWhole(ctx context.Context, st GenStream, x *streamState, model, version, id string) error {
	var text []byte
	var ids []int32
	var toks []GenToken
	for {
		tok, ok, err := st.Next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		text, ids, toks = append(text, tok.Text...), append(ids, tok.ID), append(toks, tok)
	}
	switch st.Fault() {
	case FaultErrorMid:
		return status.Error(codes.Internal, faultMessage)
	case FaultNoFinal:
		x.finish()
		return nil
	case FaultUnknownID:
		id = "sutproxy-unknown-" + id
	}
	if x.wire != nil {
		ems := make([]Emission, len(toks))
		for i, tok := range toks {
			ems[i] = Emission{Model: model, ID: id, Index: tok.Index, Last: tok.Last}
		}
		x.wire.expect(id, ems...)
	}
	if x.send(genResponse(model, version, id, text, ids, true)) && x.wire == nil {
		for _, tok := range toks {
			s.emitToken(model, id, tok)
		}
	}
	return nil
}

// wireConn is the connection that records the stream's tokens when their
// bytes are written (GRPCHooks.Wire's, found by the peer's address), or
// nil when emissions are not recorded there.
func (s *grpcService) wireConn(ctx context.Context) *EmitConn {
	if s.wire == nil {
		return nil
	}
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	return s.wire.conn(p.Addr)
}

func (s *grpcService) emitToken(model, id string, tok GenToken) {
	if s.emit != nil {
		s.emit(Emission{Model: model, ID: id, Index: tok.Index, Last: tok.Last, At: time.Now()})
	}
}

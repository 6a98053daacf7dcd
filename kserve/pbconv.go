package kserve

// This file converts requests, responses, parameters and metadata to and from
// the gRPC messages of package inferencepb. Tensor data is never copied on the
// raw path: the messages and the Tensors share their byte slices and shapes,
// so neither may be modified while the other is in use.

import (
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// InferRequestToPB encodes req with its tensor data in raw_input_contents
// (one entry per input, in order): the fast path, no per-element encoding.
// Each input's data is checked against its datatype and shape; a bad one gives
// an *Error with code InvalidArgument naming the input.
func InferRequestToPB(req *InferRequest) (*inferencepb.ModelInferRequest, error) {
	return inferRequestToPB(req, false)
}

// InferRequestToPBTyped encodes req with typed InferTensorContents, for
// servers without raw contents. FP16 and BF16 inputs cannot travel this way.
func InferRequestToPBTyped(req *InferRequest) (*inferencepb.ModelInferRequest, error) {
	return inferRequestToPB(req, true)
}

// MarshalGRPCInfer converts req as InferRequestToPB does and encodes it: the
// gRPC message, without the 5-byte length prefix of the wire, for clients
// that speak HTTP/2 themselves (pkg/grpcloop).
func MarshalGRPCInfer(req *InferRequest) ([]byte, error) {
	_, b, err := MarshalGRPCInferMessage(req)
	return b, err
}

// MarshalGRPCInferMessage is MarshalGRPCInfer that also returns the message
// it encoded, which grpcclient's prepared requests keep beside their bytes.
func MarshalGRPCInferMessage(req *InferRequest) (*inferencepb.ModelInferRequest, []byte, error) {
	m, err := InferRequestToPB(req)
	if err != nil {
		return nil, nil, err
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, nil, pbErrorf("ModelInferRequest: %v", err)
	}
	return m, b, nil
}

func inferRequestToPB(req *InferRequest, typed bool) (*inferencepb.ModelInferRequest, error) {
	if req == nil {
		return nil, pbErrorf("no request")
	}
	params, err := ParametersToPB(req.Parameters)
	if err != nil {
		return nil, err
	}
	m := &inferencepb.ModelInferRequest{
		ModelName:    req.Model,
		ModelVersion: req.Version,
		Id:           req.ID,
		Parameters:   params,
		Inputs:       make([]*inferencepb.ModelInferRequest_InferInputTensor, len(req.Inputs)),
	}
	if !typed {
		m.RawInputContents = make([][]byte, len(req.Inputs))
	}
	for i := range req.Inputs {
		t := &req.Inputs[i]
		in := &inferencepb.ModelInferRequest_InferInputTensor{Name: t.Name, Datatype: string(t.Datatype), Shape: t.Shape}
		if err := pbCheckRaw("input", t.Name, t.Datatype, t.Shape, t.Data); err != nil {
			return nil, err
		}
		if in.Parameters, err = ParametersToPB(t.Parameters); err != nil {
			return nil, pbInvalid("input", t.Name, "%s", pbMessage(err))
		}
		if typed {
			if in.Contents, err = pbRawToContents("input", t.Name, t.Datatype, t.Data); err != nil {
				return nil, err
			}
		} else {
			m.RawInputContents[i] = t.Data
		}
		m.Inputs[i] = in
	}
	if len(req.Outputs) > 0 {
		m.Outputs = make([]*inferencepb.ModelInferRequest_InferRequestedOutputTensor, len(req.Outputs))
		for i, o := range req.Outputs {
			p, err := ParametersToPB(o.Parameters)
			if err != nil {
				return nil, pbInvalid("requested output", o.Name, "%s", pbMessage(err))
			}
			m.Outputs[i] = &inferencepb.ModelInferRequest_InferRequestedOutputTensor{Name: o.Name, Parameters: p}
		}
	}
	return m, nil
}

// InferRequestFromPB decodes m, whose tensor data may be in
// raw_input_contents or in typed contents but not both. Each input's data is
// checked against its datatype and shape. Errors are *Error with code
// InvalidArgument, naming the input.
func InferRequestFromPB(m *inferencepb.ModelInferRequest) (*InferRequest, error) {
	if m == nil {
		return nil, pbErrorf("no request")
	}
	params, err := ParametersFromPB(m.GetParameters())
	if err != nil {
		return nil, err
	}
	inputs, err := pbTensorsFromPB("input", m.GetInputs(), m.GetRawInputContents(), "raw_input_contents")
	if err != nil {
		return nil, err
	}
	req := &InferRequest{Model: m.GetModelName(), Version: m.GetModelVersion(), ID: m.GetId(), Parameters: params, Inputs: inputs}
	if outs := m.GetOutputs(); len(outs) > 0 {
		req.Outputs = make([]RequestedOutput, len(outs))
		for i, o := range outs {
			p, err := ParametersFromPB(o.GetParameters())
			if err != nil {
				return nil, pbInvalid("requested output", o.GetName(), "%s", pbMessage(err))
			}
			req.Outputs[i] = RequestedOutput{Name: o.GetName(), Parameters: p}
		}
	}
	return req, nil
}

// InferResponseToPB encodes resp with its tensor data in raw_output_contents,
// checking each output as InferRequestToPB checks inputs.
func InferResponseToPB(resp *InferResponse) (*inferencepb.ModelInferResponse, error) {
	return inferResponseToPB(resp, false)
}

func inferResponseToPB(resp *InferResponse, typed bool) (*inferencepb.ModelInferResponse, error) {
	if resp == nil {
		return nil, pbErrorf("no response")
	}
	params, err := ParametersToPB(resp.Parameters)
	if err != nil {
		return nil, err
	}
	m := &inferencepb.ModelInferResponse{
		ModelName:    resp.Model,
		ModelVersion: resp.Version,
		Id:           resp.ID,
		Parameters:   params,
		Outputs:      make([]*inferencepb.ModelInferResponse_InferOutputTensor, len(resp.Outputs)),
	}
	if !typed {
		m.RawOutputContents = make([][]byte, len(resp.Outputs))
	}
	for i := range resp.Outputs {
		t := &resp.Outputs[i]
		out := &inferencepb.ModelInferResponse_InferOutputTensor{Name: t.Name, Datatype: string(t.Datatype), Shape: t.Shape}
		if err := pbCheckRaw("output", t.Name, t.Datatype, t.Shape, t.Data); err != nil {
			return nil, err
		}
		if out.Parameters, err = ParametersToPB(t.Parameters); err != nil {
			return nil, pbInvalid("output", t.Name, "%s", pbMessage(err))
		}
		if typed {
			if out.Contents, err = pbRawToContents("output", t.Name, t.Datatype, t.Data); err != nil {
				return nil, err
			}
		} else {
			m.RawOutputContents[i] = t.Data
		}
		m.Outputs[i] = out
	}
	return m, nil
}

// InferResponseFromPB decodes m, whose tensor data may be in
// raw_output_contents or in typed contents but not both.
func InferResponseFromPB(m *inferencepb.ModelInferResponse) (*InferResponse, error) {
	if m == nil {
		return nil, pbErrorf("no response")
	}
	params, err := ParametersFromPB(m.GetParameters())
	if err != nil {
		return nil, err
	}
	outputs, err := pbTensorsFromPB("output", m.GetOutputs(), m.GetRawOutputContents(), "raw_output_contents")
	if err != nil {
		return nil, err
	}
	return &InferResponse{Model: m.GetModelName(), Version: m.GetModelVersion(), ID: m.GetId(), Parameters: params, Outputs: outputs}, nil
}

// pbMessage is the message of an *Error, to be reworded with more context.
func pbMessage(err error) string {
	if ke, ok := errors.AsType[*Error](err); ok {
		return ke.Message
	}
	return err.Error()
}

// pbTensor is what input and output tensor messages have in common.
type pbTensor interface {
	GetName() string
	GetDatatype() string
	GetShape() []int64
	GetParameters() map[string]*inferencepb.InferParameter
	GetContents() *inferencepb.InferTensorContents
}

// pbTensorsFromPB decodes tensors whose data is either all in raw (one entry
// per tensor, in order) or all in their typed contents.
func pbTensorsFromPB[T pbTensor](kind string, ts []T, raw [][]byte, rawField string) ([]Tensor, error) {
	if len(raw) > 0 && len(raw) != len(ts) {
		return nil, pbErrorf("%d %s entries for %d %ss", len(raw), rawField, len(ts), kind)
	}
	if len(ts) == 0 {
		return nil, nil
	}
	out := make([]Tensor, len(ts))
	for i, pt := range ts {
		t := &out[i]
		t.Name, t.Datatype, t.Shape = pt.GetName(), DataType(pt.GetDatatype()), pt.GetShape()
		if !t.Datatype.Valid() {
			return nil, pbInvalid(kind, t.Name, "unknown datatype %q", t.Datatype)
		}
		n, err := pbElements(kind, t.Name, t.Shape)
		if err != nil {
			return nil, err
		}
		if t.Parameters, err = ParametersFromPB(pt.GetParameters()); err != nil {
			return nil, pbInvalid(kind, t.Name, "%s", pbMessage(err))
		}
		c := pt.GetContents()
		switch {
		case len(raw) > 0 && pbContentsUsed(c):
			return nil, pbInvalid(kind, t.Name, "has typed contents while the message uses %s", rawField)
		case len(raw) > 0:
			t.Data = raw[i]
			if err := pbCheckRaw(kind, t.Name, t.Datatype, t.Shape, t.Data); err != nil {
				return nil, err
			}
		case pbContentsUsed(c):
			if t.Data, err = pbContentsToRaw(kind, t.Name, t.Datatype, n, c); err != nil {
				return nil, err
			}
		case n != 0:
			return nil, pbInvalid(kind, t.Name, "has no data (shape %v needs %d elements)", t.Shape, n)
		}
	}
	return out, nil
}

// ParametersToPB encodes parameters. Values may be string, bool, any Go
// integer or float type; anything else is an InvalidArgument *Error.
func ParametersToPB(p Parameters) (map[string]*inferencepb.InferParameter, error) {
	if len(p) == 0 {
		return nil, nil
	}
	m := make(map[string]*inferencepb.InferParameter, len(p))
	for k, v := range p {
		var c inferencepb.InferParameter
		switch v := v.(type) {
		case string:
			c.ParameterChoice = &inferencepb.InferParameter_StringParam{StringParam: v}
		case bool:
			c.ParameterChoice = &inferencepb.InferParameter_BoolParam{BoolParam: v}
		case int64:
			c.ParameterChoice = &inferencepb.InferParameter_Int64Param{Int64Param: v}
		case int:
			c.ParameterChoice = &inferencepb.InferParameter_Int64Param{Int64Param: int64(v)}
		case int32:
			c.ParameterChoice = &inferencepb.InferParameter_Int64Param{Int64Param: int64(v)}
		case int16:
			c.ParameterChoice = &inferencepb.InferParameter_Int64Param{Int64Param: int64(v)}
		case int8:
			c.ParameterChoice = &inferencepb.InferParameter_Int64Param{Int64Param: int64(v)}
		case uint64:
			c.ParameterChoice = &inferencepb.InferParameter_Uint64Param{Uint64Param: v}
		case uint:
			c.ParameterChoice = &inferencepb.InferParameter_Uint64Param{Uint64Param: uint64(v)}
		case uint32:
			c.ParameterChoice = &inferencepb.InferParameter_Uint64Param{Uint64Param: uint64(v)}
		case uint16:
			c.ParameterChoice = &inferencepb.InferParameter_Uint64Param{Uint64Param: uint64(v)}
		case uint8:
			c.ParameterChoice = &inferencepb.InferParameter_Uint64Param{Uint64Param: uint64(v)}
		case float64:
			c.ParameterChoice = &inferencepb.InferParameter_DoubleParam{DoubleParam: v}
		case float32:
			c.ParameterChoice = &inferencepb.InferParameter_DoubleParam{DoubleParam: float64(v)}
		default:
			return nil, pbErrorf("parameter %q: unsupported type %T", k, v)
		}
		m[k] = &c
	}
	return m, nil
}

// ParametersFromPB decodes parameters to string, bool, int64, uint64 or
// float64 values; a parameter with no value set is an InvalidArgument *Error.
func ParametersFromPB(m map[string]*inferencepb.InferParameter) (Parameters, error) {
	if len(m) == 0 {
		return nil, nil
	}
	p := make(Parameters, len(m))
	for k, v := range m {
		switch c := v.GetParameterChoice().(type) {
		case *inferencepb.InferParameter_StringParam:
			p[k] = c.StringParam
		case *inferencepb.InferParameter_BoolParam:
			p[k] = c.BoolParam
		case *inferencepb.InferParameter_Int64Param:
			p[k] = c.Int64Param
		case *inferencepb.InferParameter_Uint64Param:
			p[k] = c.Uint64Param
		case *inferencepb.InferParameter_DoubleParam:
			p[k] = c.DoubleParam
		default:
			return nil, pbErrorf("parameter %q has no value", k)
		}
	}
	return p, nil
}

// ServerMetadataToPB encodes server metadata.
func ServerMetadataToPB(md ServerMetadata) *inferencepb.ServerMetadataResponse {
	return &inferencepb.ServerMetadataResponse{Name: md.Name, Version: md.Version, Extensions: md.Extensions}
}

// ServerMetadataFromPB decodes server metadata.
func ServerMetadataFromPB(m *inferencepb.ServerMetadataResponse) ServerMetadata {
	return ServerMetadata{Name: m.GetName(), Version: m.GetVersion(), Extensions: m.GetExtensions()}
}

// ModelMetadataToPB encodes model metadata.
func ModelMetadataToPB(md ModelMetadata) *inferencepb.ModelMetadataResponse {
	return &inferencepb.ModelMetadataResponse{
		Name:     md.Name,
		Versions: md.Versions,
		Platform: md.Platform,
		Inputs:   pbTensorMetadataToPB(md.Inputs),
		Outputs:  pbTensorMetadataToPB(md.Outputs),
	}
}

// ModelMetadataFromPB decodes model metadata.
func ModelMetadataFromPB(m *inferencepb.ModelMetadataResponse) ModelMetadata {
	return ModelMetadata{
		Name:     m.GetName(),
		Versions: m.GetVersions(),
		Platform: m.GetPlatform(),
		Inputs:   pbTensorMetadataFromPB(m.GetInputs()),
		Outputs:  pbTensorMetadataFromPB(m.GetOutputs()),
	}
}

func pbTensorMetadataToPB(ts []TensorMetadata) []*inferencepb.ModelMetadataResponse_TensorMetadata {
	if len(ts) == 0 {
		return nil
	}
	out := make([]*inferencepb.ModelMetadataResponse_TensorMetadata, len(ts))
	for i, t := range ts {
		out[i] = &inferencepb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: string(t.Datatype), Shape: t.Shape}
	}
	return out
}

func pbTensorMetadataFromPB(ts []*inferencepb.ModelMetadataResponse_TensorMetadata) []TensorMetadata {
	if len(ts) == 0 {
		return nil
	}
	out := make([]TensorMetadata, len(ts))
	for i, t := range ts {
		out[i] = TensorMetadata{Name: t.GetName(), Datatype: DataType(t.GetDatatype()), Shape: t.GetShape()}
	}
	return out
}

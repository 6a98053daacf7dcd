package kserve

// Inference requests in the REST form: JSON, or JSON header + binary tensor data.

import "strconv"

// EncodeInferRequest appends req's REST body to dst. With binary false the
// body is pure JSON (FP16 and BF16 inputs are then an error) and jsonLen is
// -1: send no Inference-Header-Content-Length header (and Content-Type
// application/json). With binary true every input's data follows the JSON
// header as raw bytes (parameters.binary_data_size on each input), every
// requested output asks for binary_data, or when req.Outputs is empty the
// request asks for binary_data_output; jsonLen is then the header's length,
// the value of Inference-Header-Content-Length. req is not modified; its
// Model and Version belong in the URL.
func EncodeInferRequest(dst []byte, req *InferRequest, binary bool) (body []byte, jsonLen int, err error) {
	start := len(dst)
	dst = append(dst, '{')
	if req.ID != "" {
		dst = append(dst, `"id":`...)
		dst = appendJSONString(dst, req.ID)
		dst = append(dst, ',')
	}
	switch {
	case binary && len(req.Outputs) == 0:
		dst = append(dst, `"parameters":`...)
		if dst, err = appendParams(dst, req.Parameters, ParamBinaryDataOutput, true); err != nil {
			return dst[:start], 0, err
		}
		dst = append(dst, ',')
	case len(req.Parameters) > 0:
		dst = append(dst, `"parameters":`...)
		if dst, err = appendParams(dst, req.Parameters); err != nil {
			return dst[:start], 0, err
		}
		dst = append(dst, ',')
	}
	dst = append(dst, `"inputs":[`...)
	for i := range req.Inputs {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendTensor(dst, &req.Inputs[i], binary); err != nil {
			return dst[:start], 0, err
		}
	}
	dst = append(dst, ']')
	if len(req.Outputs) > 0 {
		dst = append(dst, `,"outputs":[`...)
		for i, o := range req.Outputs {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = appendJSONString(dst, o.Name)
			switch {
			case binary:
				dst = append(dst, `,"parameters":`...)
				dst, err = appendParams(dst, o.Parameters, ParamBinaryData, true)
			case len(o.Parameters) > 0:
				dst = append(dst, `,"parameters":`...)
				dst, err = appendParams(dst, o.Parameters)
			}
			if err != nil {
				return dst[:start], 0, err
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, '}')
	if !binary {
		return dst, -1, nil
	}
	jsonLen = len(dst) - start
	for i := range req.Inputs {
		dst = append(dst, req.Inputs[i].Data...)
	}
	return dst, jsonLen, nil
}

type wireRequestedOutput struct {
	Name       string     `json:"name"`
	Parameters wireParams `json:"parameters"`
}

type wireRequest struct {
	ID         string                `json:"id"`
	Parameters wireParams            `json:"parameters"`
	Inputs     []wireTensor          `json:"inputs"`
	Outputs    []wireRequestedOutput `json:"outputs"`
}

// DecodeInferRequest decodes a REST request body. jsonLen is the
// Inference-Header-Content-Length header's value, negative when the header is
// absent (the body is pure JSON); 0 gives ErrRawBody. Binary tensor data
// aliases body. The binary_data_size parameters are framing and are removed;
// Model and Version are left for the caller to fill from the URL.
func DecodeInferRequest(body []byte, jsonLen int) (*InferRequest, error) {
	header, bin, hasBin, err := splitBody(body, jsonLen)
	if err != nil {
		return nil, err
	}
	var w wireRequest
	if err := unmarshalHeader(header, &w); err != nil {
		return nil, err
	}
	if len(w.Inputs) == 0 {
		return nil, Malformedf("request has no inputs")
	}
	req := &InferRequest{ID: w.ID, Parameters: Parameters(w.Parameters)}
	if req.Inputs, err = decodeTensors(w.Inputs, bin, hasBin, "input"); err != nil {
		return nil, err
	}
	if len(w.Outputs) > 0 {
		req.Outputs = make([]RequestedOutput, len(w.Outputs))
		for i, o := range w.Outputs {
			if o.Name == "" {
				return nil, Malformedf("requested output %d has no name", i)
			}
			req.Outputs[i] = RequestedOutput{Name: o.Name, Parameters: Parameters(o.Parameters)}
		}
	}
	return req, nil
}

// DecodeRawInferRequest decodes a body sent with
// Inference-Header-Content-Length: 0: the raw data of the model's single
// input, described by in. The shape is in's, with a variable (-1) dimension
// inferred from the data's length; at most one dimension may be variable.
func DecodeRawInferRequest(body []byte, in TensorMetadata) (*InferRequest, error) {
	if !in.Datatype.Valid() {
		return nil, Malformedf("input %q: unknown datatype %q", in.Name, in.Datatype)
	}
	n, err := CountElements(in.Datatype, body)
	if err != nil {
		return nil, Malformedf("raw body for input %q: %s", in.Name, malformedMsg(err))
	}
	shape := append([]int64(nil), in.Shape...)
	variable, known := -1, int64(1)
	for i, d := range shape {
		switch {
		case d >= 0:
			known *= d
		case variable >= 0:
			return nil, Malformedf("input %q has shape %v with more than one variable dimension; a raw body cannot fix it", in.Name, in.Shape)
		default:
			variable = i
		}
	}
	if variable >= 0 {
		if known == 0 || n%known != 0 {
			return nil, Malformedf("raw body of %d %s elements does not fit input %q shape %v", n, in.Datatype, in.Name, in.Shape)
		}
		shape[variable] = n / known
	}
	if err := CheckTensorData(in.Datatype, shape, body); err != nil {
		return nil, Malformedf("raw body for input %q: %s", in.Name, malformedMsg(err))
	}
	return &InferRequest{Inputs: []Tensor{{Name: in.Name, Datatype: in.Datatype, Shape: shape, Data: body}}}, nil
}

// ParseInferenceHeaderLength parses an Inference-Header-Content-Length value;
// an empty value (header absent) gives -1.
func ParseInferenceHeaderLength(v []byte) (int, error) {
	if len(v) == 0 {
		return -1, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 0 {
		return 0, Malformedf("bad %s %q", HeaderInferenceContentLength, v)
	}
	return n, nil
}

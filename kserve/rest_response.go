package kserve

// Inference responses in the REST form.

import "strconv"

// BinaryOutputs decides, for each of resp's outputs, whether a server sends
// it as binary data: the requested output's binary_data parameter, else the
// request's binary_data_output parameter, else JSON. FP16 and BF16 outputs
// always go binary, since JSON cannot carry them. It returns nil when no
// output goes binary.
func BinaryOutputs(req *InferRequest, resp *InferResponse) []bool {
	reqWide, _, _ := paramBool(req.Parameters, ParamBinaryDataOutput)
	var out []bool
	for i := range resp.Outputs {
		o := &resp.Outputs[i]
		bin := reqWide
		for j := range req.Outputs {
			if req.Outputs[j].Name == o.Name {
				if v, ok, err := paramBool(req.Outputs[j].Parameters, ParamBinaryData); ok && err == nil {
					bin = v
				}
				break
			}
		}
		if !o.Datatype.JSONCapable() {
			bin = true
		}
		if bin {
			if out == nil {
				out = make([]bool, len(resp.Outputs))
			}
			out[i] = true
		}
	}
	return out
}

// EncodeInferResponse appends resp's REST body to dst. binary[i] says whether
// output i goes as binary data (nil: all JSON); see BinaryOutputs. jsonLen is
// the value for the Inference-Header-Content-Length header, or -1 when no
// output went binary and the body is pure JSON (send no such header).
func EncodeInferResponse(dst []byte, resp *InferResponse, binary []bool) (body []byte, jsonLen int, err error) {
	if binary != nil && len(binary) != len(resp.Outputs) {
		return dst, 0, Malformedf("%d binary flags for %d outputs", len(binary), len(resp.Outputs))
	}
	start := len(dst)
	dst = append(dst, `{"model_name":`...)
	dst = appendJSONString(dst, resp.Model)
	if resp.Version != "" {
		dst = append(dst, `,"model_version":`...)
		dst = appendJSONString(dst, resp.Version)
	}
	dst = append(dst, `,"id":`...)
	dst = appendJSONString(dst, resp.ID)
	if len(resp.Parameters) > 0 {
		dst = append(dst, `,"parameters":`...)
		if dst, err = appendParams(dst, resp.Parameters); err != nil {
			return dst[:start], 0, err
		}
	}
	dst = append(dst, `,"outputs":[`...)
	anyBinary := false
	for i := range resp.Outputs {
		if i > 0 {
			dst = append(dst, ',')
		}
		bin := binary != nil && binary[i]
		anyBinary = anyBinary || bin
		if dst, err = appendTensor(dst, &resp.Outputs[i], bin); err != nil {
			return dst[:start], 0, err
		}
	}
	dst = append(dst, "]}"...)
	if !anyBinary {
		return dst, -1, nil
	}
	jsonLen = len(dst) - start
	for i := range resp.Outputs {
		if binary[i] {
			dst = append(dst, resp.Outputs[i].Data...)
		}
	}
	return dst, jsonLen, nil
}

// CheckInferResponseFraming checks a REST response body without decoding
// it: not empty, jsonLen (as DecodeInferResponse takes it) within the body,
// and a JSON object first. It is the whole check of a performance run,
// which never reads outputs (httpclient's InferPreparedCheck).
func CheckInferResponseFraming(body []byte, jsonLen int) error {
	switch {
	case len(body) == 0:
		return Malformedf("empty inference response")
	case jsonLen == 0 || jsonLen > len(body):
		return Malformedf("%s %s with a body of %d bytes", HeaderInferenceContentLength, strconv.Itoa(jsonLen), len(body))
	case body[skipWS(body, 0)%len(body)] != '{':
		return Malformedf("inference response does not start with a JSON object")
	}
	return nil
}

type wireResponse struct {
	ModelName    string       `json:"model_name"`
	ModelVersion string       `json:"model_version"`
	ID           string       `json:"id"`
	Parameters   wireParams   `json:"parameters"`
	Outputs      []wireTensor `json:"outputs"`
}

// DecodeInferResponse decodes a REST response body; jsonLen is the
// Inference-Header-Content-Length header's value, negative when absent.
// Binary output data aliases body, so a caller that reuses body's buffer must
// copy it first. The binary_data_size parameters are framing and are removed.
func DecodeInferResponse(body []byte, jsonLen int) (*InferResponse, error) {
	if jsonLen == 0 {
		return nil, Malformedf("response with %s: 0 (no JSON header)", HeaderInferenceContentLength)
	}
	header, bin, hasBin, err := splitBody(body, jsonLen)
	if err != nil {
		return nil, err
	}
	var w wireResponse
	if err := decodeResponseHeader(header, &w); err != nil {
		return nil, err
	}
	resp := &InferResponse{Model: w.ModelName, Version: w.ModelVersion, ID: w.ID, Parameters: Parameters(w.Parameters)}
	if resp.Outputs, err = decodeTensors(w.Outputs, bin, hasBin, "output"); err != nil {
		return nil, err
	}
	return resp, nil
}

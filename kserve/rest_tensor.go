package kserve

// The REST codec's shared pieces: tensors in a JSON header, and the split of
// a body into JSON header and binary section.
//
// Error rule of the codec: every decoding or encoding failure of a message
// wraps ErrMalformed (a server answers it with 400, invalid argument); the one
// exception is ErrRawBody, which is not a malformation but a body the codec
// cannot decode without the model's metadata.

import (
	"encoding/json"
	"errors"
	"strconv"
)

// ErrRawBody is returned by DecodeInferRequest for a body sent with
// Inference-Header-Content-Length: 0: raw tensor bytes with no JSON header,
// allowed for single-input models. Decode it with DecodeRawInferRequest and
// the model's input metadata.
var ErrRawBody = errors.New("raw binary body without a JSON header (Inference-Header-Content-Length: 0)")

// HeaderInferenceContentLength is the HTTP header giving the JSON header's
// length in a body with binary tensor data.
const HeaderInferenceContentLength = "Inference-Header-Content-Length"

// wireTensor is an input or output tensor in a JSON header.
type wireTensor struct {
	Name       string          `json:"name"`
	Shape      []int64         `json:"shape"`
	Datatype   DataType        `json:"datatype"`
	Parameters wireParams      `json:"parameters"`
	Data       json.RawMessage `json:"data"`
}

// splitBody splits a body by its Inference-Header-Content-Length (negative:
// no header, the body is all JSON).
func splitBody(body []byte, jsonLen int) (header, bin []byte, hasBin bool, err error) {
	switch {
	case jsonLen < 0:
		return body, nil, false, nil
	case jsonLen == 0:
		return nil, nil, false, ErrRawBody
	case jsonLen > len(body):
		return nil, nil, false, Malformedf("%s %d exceeds the body's %d bytes", HeaderInferenceContentLength, jsonLen, len(body))
	}
	return body[:jsonLen], body[jsonLen:], true, nil
}

// decodeTensors converts the header's tensors, taking binary data from bin in
// order. kind is "input" or "output", for messages.
func decodeTensors(wts []wireTensor, bin []byte, hasBin bool, kind string) ([]Tensor, error) {
	if len(wts) == 0 {
		return nil, nil
	}
	out := make([]Tensor, len(wts))
	for i := range wts {
		w := &wts[i]
		if err := decodeTensor(&out[i], w, &bin, hasBin); err != nil {
			return nil, Malformedf("%s %d (%q): %s", kind, i, w.Name, malformedMsg(err))
		}
	}
	if len(bin) != 0 {
		return nil, Malformedf("%d bytes of binary data beyond the tensors' binary_data_size", len(bin))
	}
	return out, nil
}

func decodeTensor(t *Tensor, w *wireTensor, bin *[]byte, hasBin bool) error {
	switch {
	case w.Name == "":
		return Malformedf("missing name")
	case !w.Datatype.Valid():
		return Malformedf("unknown datatype %q", w.Datatype)
	case w.Shape == nil:
		return Malformedf("missing shape")
	}
	for _, d := range w.Shape {
		if d < 0 {
			return Malformedf("shape %v has a negative dimension", w.Shape)
		}
	}
	*t = Tensor{Name: w.Name, Datatype: w.Datatype, Shape: w.Shape}
	size, hasSize, err := paramInt(Parameters(w.Parameters), ParamBinaryDataSize)
	if err != nil {
		return err
	}
	if hasSize {
		// The size is framing, not a property of the tensor: drop it.
		delete(w.Parameters, ParamBinaryDataSize)
	}
	if len(w.Parameters) > 0 {
		t.Parameters = Parameters(w.Parameters)
	}
	if !hasSize {
		if len(w.Data) == 0 || string(w.Data) == "null" {
			return Malformedf("no data and no %s", ParamBinaryDataSize)
		}
		var n int64
		if t.Data, n, err = DecodeJSONData(nil, w.Datatype, w.Data); err != nil {
			return err
		}
		if want := ElementCount(w.Shape); n != want {
			return Malformedf("data holds %d elements, shape %v needs %d", n, w.Shape, want)
		}
		return nil
	}
	if !hasBin {
		return Malformedf("%s given but the body has no binary section (no %s header)", ParamBinaryDataSize, HeaderInferenceContentLength)
	}
	if size < 0 || size > int64(len(*bin)) {
		return Malformedf("%s %d but only %d bytes of binary data are left", ParamBinaryDataSize, size, len(*bin))
	}
	t.Data = (*bin)[:size:size]
	*bin = (*bin)[size:]
	return CheckTensorData(t.Datatype, t.Shape, t.Data)
}

// appendTensor appends t's JSON form; binary true writes binary_data_size
// instead of data.
func appendTensor(dst []byte, t *Tensor, binary bool) ([]byte, error) {
	if t.Name == "" {
		return dst, Malformedf("tensor without a name")
	}
	if !t.Datatype.Valid() {
		return dst, Malformedf("tensor %q: unknown datatype %q", t.Name, t.Datatype)
	}
	if err := CheckTensorData(t.Datatype, t.Shape, t.Data); err != nil {
		return dst, Malformedf("tensor %q: %s", t.Name, malformedMsg(err))
	}
	dst = append(dst, `{"name":`...)
	dst = appendJSONString(dst, t.Name)
	dst = append(dst, `,"datatype":"`...)
	dst = append(dst, t.Datatype...)
	dst = append(dst, `","shape":[`...)
	for i, d := range t.Shape {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, d, 10)
	}
	dst = append(dst, ']')
	var err error
	if binary {
		dst = append(dst, `,"parameters":`...)
		if dst, err = appendParams(dst, t.Parameters, ParamBinaryDataSize, int64(len(t.Data))); err != nil {
			return dst, err
		}
		return append(dst, '}'), nil
	}
	if len(t.Parameters) > 0 {
		dst = append(dst, `,"parameters":`...)
		if dst, err = appendParams(dst, t.Parameters); err != nil {
			return dst, err
		}
	}
	dst = append(dst, `,"data":`...)
	if dst, err = AppendJSONData(dst, t.Datatype, t.Data); err != nil {
		return dst, Malformedf("tensor %q: %s", t.Name, malformedMsg(err))
	}
	return append(dst, '}'), nil
}

func unmarshalHeader(header []byte, v any) error {
	if err := json.Unmarshal(header, v); err != nil {
		if errors.Is(err, ErrMalformed) {
			return err
		}
		return Malformedf("JSON header: %v", err)
	}
	return nil
}

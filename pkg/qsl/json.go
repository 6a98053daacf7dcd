package qsl

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/netloadgen/netloadgen/kserve"
)

// readJSON reads perf_analyzer's input-data JSON: {"data": [entry, ...]}
// where an entry maps every input name to a flat (row-major) list, to
// {"content": list-or-{"b64"}, "shape": [...]}, or to {"b64": "..."} of
// raw little-endian bytes (BYTES: length-prefixed elements). Sequence
// streams ({"data": [[entry, ...], ...]}) are taken one after another.
func readJSON(path string, inputs []kserve.TensorMetadata, batched bool) ([]source, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, dataErr(path, "", ErrFormat, "not perf_analyzer input data JSON: %v", err)
	}
	if doc.Data == nil {
		return nil, dataErr(path, "", ErrFormat, "no \"data\" array")
	}
	var entries []json.RawMessage
	for _, d := range doc.Data {
		if t := bytes.TrimSpace(d); len(t) > 0 && t[0] == '[' {
			var stream []json.RawMessage
			if err := json.Unmarshal(t, &stream); err != nil {
				return nil, &DataError{Path: path, Entry: len(entries), Err: fmt.Errorf("%w: stream: %v", ErrFormat, err)}
			}
			entries = append(entries, stream...)
			continue
		}
		entries = append(entries, d)
	}
	if len(entries) == 0 {
		return nil, dataErr(path, "", ErrNoSamples, "the \"data\" array is empty")
	}
	srcs := make([]source, len(inputs))
	known := map[string]bool{}
	for i, in := range inputs {
		srcs[i] = source{name: in.Name, dt: in.Datatype, parts: make([]part, 0, len(entries))}
		known[in.Name] = true
	}
	for e, raw := range entries {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return nil, &DataError{Path: path, Entry: e, Err: fmt.Errorf("%w: an entry is an object mapping input names to tensors", ErrFormat)}
		}
		for name := range m {
			if !known[name] {
				return nil, &DataError{Path: path, Entry: e, Input: name, Err: fmt.Errorf("%w (inputs: %s)", ErrUnknownInput, inputNames(inputs))}
			}
		}
		for i, in := range inputs {
			v, ok := m[in.Name]
			if !ok {
				return nil, &DataError{Path: path, Entry: e, Input: in.Name, Err: fmt.Errorf("%w: every entry gives every input", ErrMissingInput)}
			}
			data, shape, err := jsonTensor(v, in, batched)
			if err != nil {
				return nil, &DataError{Path: path, Entry: e, Input: in.Name, Err: err}
			}
			srcs[i].parts = append(srcs[i].parts, part{path: path, entry: e, n: int64(len(data)), data: data, shape: shape})
		}
	}
	return srcs, nil
}

// jsonTensor decodes one input's value in an entry to raw bytes and the
// sample's shape.
func jsonTensor(v json.RawMessage, in kserve.TensorMetadata, batched bool) ([]byte, []int64, error) {
	v = bytes.TrimSpace(v)
	var content json.RawMessage
	var shape []int64
	switch {
	case len(v) > 0 && v[0] == '[':
		content = v
	case len(v) > 0 && v[0] == '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(v, &obj); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
		for k := range obj {
			if k != "content" && k != "shape" && k != "b64" {
				return nil, nil, fmt.Errorf("%w: unknown key %q (content, shape, b64)", ErrFormat, k)
			}
		}
		if s, ok := obj["shape"]; ok {
			if err := json.Unmarshal(s, &shape); err != nil {
				return nil, nil, fmt.Errorf("%w: \"shape\" is not a list of integers: %v", ErrFormat, err)
			}
			if shape == nil {
				shape = []int64{}
			}
		}
		c, hasC := obj["content"]
		_, hasB := obj["b64"]
		switch {
		case hasC && hasB:
			return nil, nil, fmt.Errorf("%w: both \"content\" and \"b64\"", ErrFormat)
		case hasB:
			content = v // {"b64": ...} itself
		case hasC:
			content = bytes.TrimSpace(c)
		default:
			return nil, nil, fmt.Errorf("%w: no \"content\" or \"b64\"", ErrFormat)
		}
	default:
		return nil, nil, fmt.Errorf("%w: a tensor is a list, {\"content\": ..., \"shape\": ...} or {\"b64\": ...}", ErrFormat)
	}

	var data []byte
	var count int64
	var err error
	if len(content) > 0 && content[0] == '{' {
		data, count, err = b64Tensor(content, in.Datatype)
	} else {
		data, count, err = listTensor(content, in.Datatype)
	}
	if err != nil {
		return nil, nil, err
	}
	if shape != nil {
		if shape, err = fitShape(shape, in.Shape, batched); err != nil {
			return nil, nil, err
		}
		if n := kserve.ElementCount(shape); n != count {
			return nil, nil, fmt.Errorf("%w: %d elements, shape %v holds %d", ErrShape, count, shape, n)
		}
		return data, shape, nil
	}
	if shape, err = inferShape(in.Shape, count); err != nil {
		return nil, nil, err
	}
	return data, shape, nil
}

// inferShape gives a list without "shape" the input's shape: fixed, it must
// hold count elements; with one variable dimension, that one is solved for.
func inferShape(want []int64, count int64) ([]int64, error) {
	shape := slices.Clone(want)
	variable, rest := -1, int64(1)
	for i, d := range want {
		if d < 0 {
			if variable >= 0 {
				return nil, fmt.Errorf("%w: the input's shape %v has several variable dimensions; give \"shape\" with \"content\"", ErrShape, want)
			}
			variable = i
			continue
		}
		rest *= d
	}
	if variable < 0 {
		if rest != count {
			return nil, fmt.Errorf("%w: %d elements, the input's shape %v holds %d", ErrShape, count, want, rest)
		}
		return shape, nil
	}
	if rest == 0 || count%rest != 0 {
		return nil, fmt.Errorf("%w: %d elements do not fill the input's shape %v", ErrShape, count, want)
	}
	shape[variable] = count / rest
	return shape, nil
}

// b64Tensor decodes {"b64": "..."}: raw little-endian bytes, or for BYTES
// length-prefixed elements.
func b64Tensor(v json.RawMessage, dt kserve.DataType) ([]byte, int64, error) {
	var obj struct {
		B64 *string `json:"b64"`
	}
	if err := json.Unmarshal(v, &obj); err != nil || obj.B64 == nil {
		return nil, 0, fmt.Errorf("%w: an object content is {\"b64\": \"...\"}", ErrFormat)
	}
	data, err := base64.StdEncoding.DecodeString(*obj.B64)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: b64: %v", ErrFormat, err)
	}
	if dt == kserve.Bytes {
		n, err := countBytesElements(data)
		return data, n, err
	}
	if len(data)%dt.Size() != 0 {
		return nil, 0, fmt.Errorf("%w: b64 holds %d bytes, not a whole number of %d-byte %s elements", ErrShape, len(data), dt.Size(), dt)
	}
	return data, int64(len(data) / dt.Size()), nil
}

// listTensor encodes a (possibly nested) JSON list, flattened row-major.
func listTensor(v json.RawMessage, dt kserve.DataType) ([]byte, int64, error) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var tree any
	if err := d.Decode(&tree); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if _, ok := tree.([]any); !ok {
		return nil, 0, fmt.Errorf("%w: content is not a list", ErrFormat)
	}
	var leaves []any
	var flatten func(any)
	flatten = func(x any) {
		if l, ok := x.([]any); ok {
			for _, y := range l {
				flatten(y)
			}
			return
		}
		leaves = append(leaves, x)
	}
	flatten(tree)
	var out []byte
	if size := dt.Size(); size > 0 {
		out = make([]byte, 0, len(leaves)*size)
	}
	for i, x := range leaves {
		var err error
		if out, err = appendElement(out, x, dt); err != nil {
			return nil, 0, fmt.Errorf("%w: element %d: %v", ErrDatatype, i, err)
		}
	}
	return out, int64(len(leaves)), nil
}

var errNotNumber = errors.New("not a number")

// appendElement encodes one JSON value as a dt element, refusing values the
// type cannot hold rather than wrapping or truncating them.
func appendElement(b []byte, x any, dt kserve.DataType) ([]byte, error) {
	le := binary.LittleEndian
	if dt == kserve.Bytes {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("%v is not a string (BYTES)", x)
		}
		b = le.AppendUint32(b, uint32(len(s)))
		return append(b, s...), nil
	}
	if dt == kserve.Bool {
		switch t := x.(type) {
		case bool:
			if t {
				return append(b, 1), nil
			}
			return append(b, 0), nil
		case json.Number:
			if t == "0" || t == "1" {
				return append(b, byte(t[0]-'0')), nil
			}
		}
		return nil, fmt.Errorf("%v is not true/false (BOOL)", x)
	}
	num, ok := x.(json.Number)
	if !ok {
		if str, isStr := x.(string); isStr {
			return nil, fmt.Errorf("%q is a string, %w (%s)", str, errNotNumber, dt)
		}
		return nil, fmt.Errorf("%v is %w (%s)", x, errNotNumber, dt)
	}
	s := string(num)
	switch dt {
	case kserve.Int8, kserve.Int16, kserve.Int32, kserve.Int64:
		bits := dt.Size() * 8
		v, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("%s is not an integer that fits %s", s, dt)
		}
		switch bits {
		case 8:
			return append(b, byte(v)), nil
		case 16:
			return le.AppendUint16(b, uint16(v)), nil
		case 32:
			return le.AppendUint32(b, uint32(v)), nil
		}
		return le.AppendUint64(b, uint64(v)), nil
	case kserve.Uint8, kserve.Uint16, kserve.Uint32, kserve.Uint64:
		bits := dt.Size() * 8
		v, err := strconv.ParseUint(s, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("%s is not an integer that fits %s", s, dt)
		}
		switch bits {
		case 8:
			return append(b, byte(v)), nil
		case 16:
			return le.AppendUint16(b, uint16(v)), nil
		case 32:
			return le.AppendUint32(b, uint32(v)), nil
		}
		return le.AppendUint64(b, v), nil
	case kserve.FP32:
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return nil, fmt.Errorf("%s does not fit FP32", s)
		}
		return le.AppendUint32(b, math.Float32bits(float32(v))), nil
	case kserve.FP64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%s does not fit FP64", s)
		}
		return le.AppendUint64(b, math.Float64bits(v)), nil
	case kserve.FP16, kserve.BF16:
		v, err := strconv.ParseFloat(s, 64)
		man, bias := uint(10), 15
		if dt == kserve.BF16 {
			man, bias = 7, 127
		}
		h, ok := halfBits(v, man, bias)
		if err != nil || !ok {
			return nil, fmt.Errorf("%s does not fit %s", s, dt)
		}
		return le.AppendUint16(b, h), nil
	}
	return nil, fmt.Errorf("datatype %s", dt)
}

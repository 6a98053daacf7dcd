package kserve

// Parameters in JSON: an object whose values are strings, numbers or bools.

import (
	"math"
	"slices"
	"strconv"
)

// Parameter names of the binary tensor data extension (PROTOCOL.md §1).
const (
	ParamBinaryDataSize   = "binary_data_size"
	ParamBinaryData       = "binary_data"
	ParamBinaryDataOutput = "binary_data_output"
)

// IsBinaryDataParam reports whether name is one of the binary tensor data
// extension's parameters above. They describe how one message is framed, not
// its tensors, so they mean nothing beyond that message: a forwarder drops
// them on both hops (pkg/forward).
func IsBinaryDataParam(name string) bool {
	switch name {
	case ParamBinaryDataSize, ParamBinaryData, ParamBinaryDataOutput:
		return true
	}
	return false
}

// appendParams appends p as a JSON object with sorted keys (so a body is
// reproducible), plus extra name/value pairs written after them unless p
// already has the name.
func appendParams(dst []byte, p Parameters, extra ...any) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var err error
	for _, k := range keys {
		dst, err = appendParam(dst, &first, k, p[k])
		if err != nil {
			return dst, err
		}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		k := extra[i].(string)
		if _, dup := p[k]; dup {
			continue
		}
		if dst, err = appendParam(dst, &first, k, extra[i+1]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendParam(dst []byte, first *bool, k string, v any) ([]byte, error) {
	if !*first {
		dst = append(dst, ',')
	}
	*first = false
	dst = appendJSONString(dst, k)
	dst = append(dst, ':')
	switch v := v.(type) {
	case string:
		return appendJSONString(dst, v), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case uint64:
		return strconv.AppendUint(dst, v, 10), nil
	case float32:
		return appendParamFloat(dst, k, float64(v), 32)
	case float64:
		return appendParamFloat(dst, k, v, 64)
	}
	return dst, Malformedf("parameter %q has type %T; want string, bool or number", k, v)
}

func appendParamFloat(dst []byte, k string, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, Malformedf("parameter %q is %v, which JSON cannot represent", k, f)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits), nil
}

// wireParams decodes a JSON parameters object by the protocol's rules.
type wireParams Parameters

// UnmarshalJSON decodes numbers to int64 when integral and in range, to
// uint64 when integral and beyond int64 (Triton's sequence_id is a uint64),
// else to float64. null leaves the parameters empty.
func (p *wireParams) UnmarshalJSON(b []byte) error {
	i := skipWS(b, 0)
	if hasPrefixAt(b, i, "null") {
		*p = nil
		return nil
	}
	if i >= len(b) || b[i] != '{' {
		return Malformedf("parameters must be a JSON object")
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		*p = nil
		return nil
	}
	out := make(wireParams, 2)
	var key []byte
	for {
		if i >= len(b) || b[i] != '"' {
			return Malformedf("expected a parameter name at offset %d", i)
		}
		var err error
		key, i, err = scanString(key[:0], b, i)
		if err != nil {
			return err
		}
		if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
			return Malformedf("expected ':' after parameter %q", key)
		}
		i = skipWS(b, i+1)
		var v any
		if v, i, err = scanParamValue(b, i); err != nil {
			return Malformedf("parameter %q: %s", key, malformedMsg(err))
		}
		out[string(key)] = v
		i = skipWS(b, i)
		if i >= len(b) {
			return Malformedf("unterminated parameters object")
		}
		if b[i] == '}' {
			*p = out
			return nil
		}
		if b[i] != ',' {
			return Malformedf("expected ',' or '}' in parameters at offset %d", i)
		}
		i = skipWS(b, i+1)
	}
}

func scanParamValue(b []byte, i int) (any, int, error) {
	switch {
	case i >= len(b):
		return nil, i, Malformedf("missing value")
	case b[i] == '"':
		s, end, err := scanString(nil, b, i)
		return string(s), end, err
	case hasPrefixAt(b, i, "true"):
		return true, i + 4, nil
	case hasPrefixAt(b, i, "false"):
		return false, i + 5, nil
	}
	end, isFloat, err := scanNumber(b, i)
	if err != nil {
		return nil, end, Malformedf("value must be a string, number or bool")
	}
	tok := b[i:end]
	if !isFloat {
		if v, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
			return v, end, nil
		}
		if v, err := strconv.ParseUint(string(tok), 10, 64); err == nil {
			return v, end, nil
		}
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return nil, end, Malformedf("number %s is out of range", tok)
	}
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return int64(f), end, nil
	}
	return f, end, nil
}

// paramInt reads an integer parameter (any numeric type holding an integral value).
func paramInt(p Parameters, name string) (int64, bool, error) {
	v, ok := p[name]
	if !ok {
		return 0, false, nil
	}
	switch v := v.(type) {
	case int64:
		return v, true, nil
	case int:
		return int64(v), true, nil
	case int32:
		return int64(v), true, nil
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), true, nil
		}
	case uint32:
		return int64(v), true, nil
	case float64:
		if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
			return int64(v), true, nil
		}
	}
	return 0, true, Malformedf("parameter %q is %v; want an integer", name, v)
}

// paramBool reads a bool parameter.
func paramBool(p Parameters, name string) (value, present bool, err error) {
	v, ok := p[name]
	if !ok {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, true, Malformedf("parameter %q is %v; want a bool", name, v)
	}
	return b, true, nil
}

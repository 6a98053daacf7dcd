package kserve

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// sampleData builds six elements of dt including its extremes, through the
// typed appenders (not through the codec under test).
func sampleData(t *testing.T, dt DataType) []byte {
	t.Helper()
	var out []byte
	var err error
	switch {
	case dt == Bool:
		for _, v := range []bool{true, false, true, true, false, false} {
			out = AppendBool(out, v)
		}
	case IsSignedInt(dt):
		lo, hi, _ := intRange(dt)
		for _, v := range []int64{lo, hi, 0, -1, 1, 42} {
			if out, err = AppendInt(out, dt, v); err != nil {
				t.Fatal(err)
			}
		}
	case IsUnsignedInt(dt):
		hi, _ := uintMax(dt)
		for _, v := range []uint64{0, hi, 1, 2, 7, 42} {
			if out, err = AppendUint(out, dt, v); err != nil {
				t.Fatal(err)
			}
		}
	case IsFloat(dt):
		big := math.MaxFloat64
		if dt == FP32 {
			big = math.MaxFloat32
		}
		for _, v := range []float64{0, -1.5, big, -big, 1e-30, 3.25} {
			if out, err = AppendFloat(out, dt, v); err != nil {
				t.Fatal(err)
			}
		}
	case dt == Bytes:
		for _, v := range []string{"", "hello", "quote\" back\\slash\n", "", "ünï\u2028", "\x01\x1f"} {
			out = AppendBytesElement(out, []byte(v))
		}
	default: // FP16, BF16: any two bytes per element
		for i := range 12 {
			out = append(out, byte(i*37))
		}
	}
	return out
}

func TestRESTInferRequestRoundTripEveryDatatype(t *testing.T) {
	for _, dt := range DataTypes {
		for _, bin := range []bool{false, true} {
			name := string(dt) + map[bool]string{false: "/json", true: "/binary"}[bin]
			t.Run(name, func(t *testing.T) {
				req := &InferRequest{
					ID:         "req-1",
					Parameters: Parameters{"sequence_id": int64(7)},
					Inputs: []Tensor{
						{Name: "x", Datatype: dt, Shape: []int64{2, 3}, Data: sampleData(t, dt)},
						{Name: "y", Datatype: Int32, Shape: []int64{1}, Data: []byte{5, 0, 0, 0}},
					},
					Outputs: []RequestedOutput{{Name: "out"}},
				}
				body, jsonLen, err := EncodeInferRequest([]byte("prefix"), req, bin)
				if !bin && !dt.JSONCapable() {
					if !errors.Is(err, ErrMalformed) {
						t.Fatalf("encode %s as JSON: err %v, want ErrMalformed", dt, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(body, []byte("prefix")) {
					t.Fatalf("body does not extend dst: %q", body[:10])
				}
				body = body[len("prefix"):]
				if bin != (jsonLen >= 0) {
					t.Fatalf("binary %v but jsonLen %d", bin, jsonLen)
				}
				got, err := DecodeInferRequest(body, jsonLen)
				if err != nil {
					t.Fatalf("decode: %v\nbody: %q", err, body)
				}
				if got.ID != req.ID || got.Parameters["sequence_id"] != int64(7) {
					t.Errorf("id/parameters: got %q %v", got.ID, got.Parameters)
				}
				if len(got.Inputs) != 2 {
					t.Fatalf("got %d inputs", len(got.Inputs))
				}
				for i, in := range got.Inputs {
					want := req.Inputs[i]
					if in.Name != want.Name || in.Datatype != want.Datatype || !reflect.DeepEqual(in.Shape, want.Shape) || !bytes.Equal(in.Data, want.Data) || in.Parameters != nil {
						t.Errorf("input %d: got %+v\nwant %+v", i, in, want)
					}
				}
				wantBinOut := any(nil)
				if bin {
					wantBinOut = true
				}
				if len(got.Outputs) != 1 || got.Outputs[0].Name != "out" || got.Outputs[0].Parameters[ParamBinaryData] != wantBinOut {
					t.Errorf("outputs: %+v", got.Outputs)
				}
			})
		}
	}
}

func TestRESTInferResponseRoundTripEveryDatatype(t *testing.T) {
	for _, dt := range DataTypes {
		t.Run(string(dt), func(t *testing.T) {
			resp := &InferResponse{
				Model: "m", Version: "2", ID: "r",
				Outputs: []Tensor{
					{Name: "a", Datatype: dt, Shape: []int64{3, 2}, Data: sampleData(t, dt)},
					{Name: "b", Datatype: FP32, Shape: []int64{1, 1}, Data: []byte{0, 0, 0x80, 0x3f}},
					{Name: "c", Datatype: Uint8, Shape: []int64{2}, Data: []byte{9, 8}, Parameters: Parameters{"note": "x"}},
				},
			}
			// Mixed: a goes binary when JSON cannot carry it (as BinaryOutputs
			// decides), c always binary, b always JSON.
			flags := []bool{!dt.JSONCapable(), false, true}
			body, jsonLen, err := EncodeInferResponse(nil, resp, flags)
			if err != nil {
				t.Fatal(err)
			}
			if jsonLen < 0 {
				t.Fatalf("jsonLen %d with binary outputs", jsonLen)
			}
			got, err := DecodeInferResponse(body, jsonLen)
			if err != nil {
				t.Fatalf("decode: %v\nbody %q", err, body)
			}
			if got.Model != "m" || got.Version != "2" || got.ID != "r" {
				t.Errorf("header fields: %+v", got)
			}
			if !reflect.DeepEqual(got.Outputs, resp.Outputs) {
				t.Errorf("outputs:\n got %+v\nwant %+v", got.Outputs, resp.Outputs)
			}
		})
	}
}

func TestRESTEncodeInferResponseAllJSONHasNoHeaderLength(t *testing.T) {
	resp := &InferResponse{Model: "m", ID: "1", Outputs: []Tensor{{Name: "o", Datatype: Int8, Shape: []int64{2}, Data: []byte{0xff, 1}}}}
	body, jsonLen, err := EncodeInferResponse(nil, resp, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model_name":"m","id":"1","outputs":[{"name":"o","datatype":"INT8","shape":[2],"data":[-1,1]}]}`
	if jsonLen != -1 || string(body) != want {
		t.Errorf("got %d %s\nwant -1 %s", jsonLen, body, want)
	}
}

func TestRESTEncodeInferRequestBinaryFraming(t *testing.T) {
	req := &InferRequest{Inputs: []Tensor{
		{Name: "a", Datatype: Uint8, Shape: []int64{2}, Data: []byte{1, 2}},
		{Name: "b", Datatype: Uint8, Shape: []int64{1}, Data: []byte{3}, Parameters: Parameters{"k": "v"}},
	}}
	body, jsonLen, err := EncodeInferRequest(nil, req, true)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"parameters":{"binary_data_output":true},"inputs":[` +
		`{"name":"a","datatype":"UINT8","shape":[2],"parameters":{"binary_data_size":2}},` +
		`{"name":"b","datatype":"UINT8","shape":[1],"parameters":{"k":"v","binary_data_size":1}}]}`
	if string(body[:jsonLen]) != wantJSON || !bytes.Equal(body[jsonLen:], []byte{1, 2, 3}) {
		t.Errorf("got %q (jsonLen %d)\nwant %s + 01 02 03", body, jsonLen, wantJSON)
	}
	if req.Parameters != nil || len(req.Inputs[1].Parameters) != 1 {
		t.Errorf("encoding modified the request: %+v", req)
	}
}

func TestRESTDecodeNestedAndFlatJSONData(t *testing.T) {
	tests := []struct {
		name, data string
		dt         DataType
		want       []byte
	}{
		{"flat", `[1,2,3,4]`, Int16, []byte{1, 0, 2, 0, 3, 0, 4, 0}},
		{"nested", ` [ [1, 2] ,[3,4] ] `, Int16, []byte{1, 0, 2, 0, 3, 0, 4, 0}},
		{"deep", `[[[true]],[[false]]]`, Bool, []byte{1, 0}},
		{"integral float for int", `[1.0, 2e1]`, Uint8, []byte{1, 20}},
		{"empty", `[]`, FP32, nil},
		{"escaped strings", `["a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00", ""]`, Bytes,
			append(AppendBytesElement(nil, []byte("a\"\\/\b\f\n\r\té😀")), 0, 0, 0, 0)},
		{"negative zero unsigned", `[-0]`, Uint32, []byte{0, 0, 0, 0}},
		{"fp64 exponent", `[-1.5E+2]`, FP64, binary.LittleEndian.AppendUint64(nil, math.Float64bits(-150))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, err := DecodeJSONData(nil, tt.dt, []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if wantN, _ := CountElements(tt.dt, tt.want); n != wantN {
				t.Errorf("count %d, want %d", n, wantN)
			}
		})
	}
}

func TestRESTDecodeJSONDataErrors(t *testing.T) {
	tests := []struct {
		name, data string
		dt         DataType
	}{
		{"INT8 too big", `[128]`, Int8},
		{"INT8 too small", `[-129]`, Int8},
		{"INT16 too big", `[32768]`, Int16},
		{"INT32 too big", `[2147483648]`, Int32},
		{"INT64 too big", `[9223372036854775808]`, Int64},
		{"UINT8 too big", `[256]`, Uint8},
		{"UINT16 too big", `[65536]`, Uint16},
		{"UINT32 too big", `[4294967296]`, Uint32},
		{"UINT64 too big", `[18446744073709551616]`, Uint64},
		{"UINT8 negative", `[-1]`, Uint8},
		{"fraction for int", `[1.5]`, Int32},
		{"FP32 overflow", `[1e39]`, FP32},
		{"FP64 overflow", `[1e400]`, FP64},
		{"bool as number", `[1]`, Bool},
		{"string for number", `["1"]`, Int32},
		{"number for bytes", `[1]`, Bytes},
		{"not an array", `{"a":1}`, Int32},
		{"unterminated", `[1,2`, Int32},
		{"trailing", `[1] x`, Int32},
		{"bad number", `[01]`, Int32},
		{"leading plus", `[+1]`, Int32},
		{"NaN", `[NaN]`, FP32},
		{"bad escape", `["\q"]`, Bytes},
		{"unterminated string", `["abc`, Bytes},
		{"trailing comma", `[1,]`, Int32},
		{"FP16 as JSON", `[1]`, FP16},
		{"BF16 as JSON", `[1]`, BF16},
		{"unknown datatype", `[1]`, DataType("FP8")},
		{"too deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), Int32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := DecodeJSONData(nil, tt.dt, []byte(tt.data))
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("err %v, want ErrMalformed", err)
			}
		})
	}
}

func TestRESTDecodeInferRequestErrors(t *testing.T) {
	bytesHdr := `{"inputs":[{"name":"s","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":3}}]}`
	tests := []struct {
		name    string
		body    string
		jsonLen int    // -2: len(body), with bin appended
		bin     string // binary section
	}{
		{"not JSON", `nope`, -1, ""},
		{"no inputs", `{"inputs":[]}`, -1, ""},
		{"wrong element count", `{"inputs":[{"name":"a","datatype":"INT32","shape":[2,2],"data":[1,2,3]}]}`, -1, ""},
		{"out of range int", `{"inputs":[{"name":"a","datatype":"UINT8","shape":[1],"data":[300]}]}`, -1, ""},
		{"unknown datatype", `{"inputs":[{"name":"a","datatype":"FLOAT","shape":[1],"data":[1]}]}`, -1, ""},
		{"missing name", `{"inputs":[{"datatype":"INT32","shape":[1],"data":[1]}]}`, -1, ""},
		{"missing shape", `{"inputs":[{"name":"a","datatype":"INT32","data":[1]}]}`, -1, ""},
		{"negative dim", `{"inputs":[{"name":"a","datatype":"INT32","shape":[-1],"data":[1]}]}`, -1, ""},
		{"no data", `{"inputs":[{"name":"a","datatype":"INT32","shape":[1]}]}`, -1, ""},
		{"FP16 as JSON", `{"inputs":[{"name":"a","datatype":"FP16","shape":[1],"data":[1]}]}`, -1, ""},
		{"bad parameter", `{"parameters":{"a":[1]},"inputs":[{"name":"a","datatype":"INT32","shape":[1],"data":[1]}]}`, -1, ""},
		{"header length beyond body", `{}`, 10, ""},
		{"header length cuts JSON", `{"inputs":[]}`, 5, ""},
		{"binary size without header", `{"inputs":[{"name":"a","datatype":"INT32","shape":[1],"parameters":{"binary_data_size":4}}]}`, -1, ""},
		{"short binary data", `{"inputs":[{"name":"a","datatype":"INT32","shape":[2],"parameters":{"binary_data_size":8}}]}`, -2, "\x01\x00\x00\x00"},
		{"binary size not matching shape", `{"inputs":[{"name":"a","datatype":"INT32","shape":[2],"parameters":{"binary_data_size":4}}]}`, -2, "\x01\x00\x00\x00"},
		{"binary size not an integer", `{"inputs":[{"name":"a","datatype":"INT32","shape":[1],"parameters":{"binary_data_size":"4"}}]}`, -2, "\x01\x00\x00\x00"},
		{"extra binary data", `{"inputs":[{"name":"a","datatype":"UINT8","shape":[1],"parameters":{"binary_data_size":1}}]}`, -2, "\x01\x02"},
		{"truncated BYTES prefix", bytesHdr, -2, "\x05\x00\x00"},
		{"BYTES length beyond data", strings.Replace(bytesHdr, ":3}", ":5}", 1), -2, "\x09\x00\x00\x00\x01"},
		{"BYTES wrong count", `{"inputs":[{"name":"s","datatype":"BYTES","shape":[2],"data":["a"]}]}`, -1, ""},
		{"output without name", `{"inputs":[{"name":"a","datatype":"INT32","shape":[1],"data":[1]}],"outputs":[{}]}`, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, jsonLen := framed(tt.body, tt.jsonLen, tt.bin)
			req, err := DecodeInferRequest(body, jsonLen)
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("got %+v, %v; want ErrMalformed", req, err)
			}
		})
	}
}

func TestRESTDecodeInferRequestRawBody(t *testing.T) {
	_, err := DecodeInferRequest([]byte{1, 2, 3, 4}, 0)
	if !errors.Is(err, ErrRawBody) || errors.Is(err, ErrMalformed) {
		t.Fatalf("err %v, want ErrRawBody only", err)
	}
	tests := []struct {
		name      string
		meta      TensorMetadata
		body      []byte
		wantShape []int64
		wantErr   bool
	}{
		{"batch inferred", TensorMetadata{"x", FP32, []int64{-1, 2}}, make([]byte, 24), []int64{3, 2}, false},
		{"fixed shape", TensorMetadata{"x", Uint8, []int64{2, 2}}, make([]byte, 4), []int64{2, 2}, false},
		{"bytes", TensorMetadata{"s", Bytes, []int64{-1}}, AppendBytesElement(AppendBytesElement(nil, nil), []byte("ab")), []int64{2}, false},
		{"not a multiple", TensorMetadata{"x", FP32, []int64{-1, 2}}, make([]byte, 20), nil, true},
		{"fixed mismatch", TensorMetadata{"x", Uint8, []int64{2, 2}}, make([]byte, 5), nil, true},
		{"two variable dims", TensorMetadata{"x", Uint8, []int64{-1, -1}}, make([]byte, 4), nil, true},
		{"bad BYTES", TensorMetadata{"s", Bytes, []int64{-1}}, []byte{1, 0}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeRawInferRequest(tt.body, tt.meta)
			if tt.wantErr {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("err %v, want ErrMalformed", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			in := req.Inputs[0]
			if in.Name != tt.meta.Name || in.Datatype != tt.meta.Datatype || !reflect.DeepEqual(in.Shape, tt.wantShape) || !bytes.Equal(in.Data, tt.body) {
				t.Errorf("got %+v", in)
			}
		})
	}
}

func TestRESTDecodeInferResponseErrors(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		jsonLen int    // -2: len(body), with bin appended
		bin     string // binary section
	}{
		{"header length zero", `{}`, 0, ""},
		{"not JSON", `{"outputs":`, -1, ""},
		{"short binary data", `{"outputs":[{"name":"o","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}}]}`, -2, "\x00\x00"},
		{"wrong count", `{"outputs":[{"name":"o","datatype":"FP32","shape":[3],"data":[1,2]}]}`, -1, ""},
		{"outputs not an array", `{"outputs":{}}`, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, jsonLen := framed(tt.body, tt.jsonLen, tt.bin)
			if _, err := DecodeInferResponse(body, jsonLen); !errors.Is(err, ErrMalformed) {
				t.Errorf("err %v, want ErrMalformed", err)
			}
		})
	}
}

func TestRESTParameterNumbers(t *testing.T) {
	body := `{"parameters":{"i":42,"neg":-3,"f":1.5,"whole":2.0,"big":18446744073709551615,"huge":1e300,"s":"x","b":false},` +
		`"inputs":[{"name":"a","datatype":"INT32","shape":[1],"data":[1]}]}`
	req, err := DecodeInferRequest([]byte(body), -1)
	if err != nil {
		t.Fatal(err)
	}
	want := Parameters{"i": int64(42), "neg": int64(-3), "f": 1.5, "whole": int64(2), "big": uint64(math.MaxUint64), "huge": 1e300, "s": "x", "b": false}
	if !reflect.DeepEqual(req.Parameters, want) {
		t.Errorf("got %#v\nwant %#v", req.Parameters, want)
	}
	if _, _, err := EncodeInferRequest(nil, &InferRequest{Parameters: Parameters{"x": []int{1}}}, false); !errors.Is(err, ErrMalformed) {
		t.Errorf("encoding a slice parameter: err %v, want ErrMalformed", err)
	}
	if _, _, err := EncodeInferRequest(nil, &InferRequest{Parameters: Parameters{"x": math.NaN()}}, false); !errors.Is(err, ErrMalformed) {
		t.Errorf("encoding a NaN parameter: err %v, want ErrMalformed", err)
	}
}

func TestRESTEncodeErrors(t *testing.T) {
	nan := binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.NaN())))
	tests := []struct {
		name string
		in   Tensor
		bin  bool
	}{
		{"NaN as JSON", Tensor{Name: "a", Datatype: FP32, Shape: []int64{1}, Data: nan}, false},
		{"data shorter than shape", Tensor{Name: "a", Datatype: FP32, Shape: []int64{2}, Data: nan}, true},
		{"unknown datatype", Tensor{Name: "a", Datatype: "X", Shape: []int64{1}, Data: nan}, true},
		{"no name", Tensor{Datatype: FP32, Shape: []int64{1}, Data: nan}, true},
		{"truncated BYTES", Tensor{Name: "a", Datatype: Bytes, Shape: []int64{1}, Data: []byte{9, 0, 0, 0}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			body, _, err := EncodeInferRequest(dst, &InferRequest{Inputs: []Tensor{tt.in}}, tt.bin)
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("err %v, want ErrMalformed", err)
			}
			if string(body) != "keep" {
				t.Errorf("dst not restored on error: %q", body)
			}
		})
	}
}

func TestRESTBinaryOutputs(t *testing.T) {
	resp := &InferResponse{Outputs: []Tensor{{Name: "a", Datatype: FP32}, {Name: "b", Datatype: FP32}, {Name: "h", Datatype: FP16}}}
	tests := []struct {
		name string
		req  InferRequest
		want []bool
	}{
		{"default JSON except FP16", InferRequest{}, []bool{false, false, true}},
		{"request-wide", InferRequest{Parameters: Parameters{ParamBinaryDataOutput: true}}, []bool{true, true, true}},
		{"per output", InferRequest{Outputs: []RequestedOutput{{Name: "b", Parameters: Parameters{ParamBinaryData: true}}}}, []bool{false, true, true}},
		{"per output overrides request", InferRequest{Parameters: Parameters{ParamBinaryDataOutput: true},
			Outputs: []RequestedOutput{{Name: "a", Parameters: Parameters{ParamBinaryData: false}}}}, []bool{false, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BinaryOutputs(&tt.req, resp); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if got := BinaryOutputs(&InferRequest{}, &InferResponse{Outputs: []Tensor{{Name: "a", Datatype: FP32}}}); got != nil {
		t.Errorf("all JSON: got %v, want nil", got)
	}
}

// framed builds a body from a JSON header and binary section; jsonLen -2
// means the header's real length.
func framed(header string, jsonLen int, bin string) ([]byte, int) {
	if jsonLen == -2 {
		jsonLen = len(header)
	}
	return []byte(header + bin), jsonLen
}

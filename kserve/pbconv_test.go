package kserve

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// pbTestData builds six elements of dt (shape [2,3]) as raw bytes. BOOL uses 0
// and 1 only: typed contents cannot carry other byte values.
func pbTestData(dt DataType) []byte {
	if dt == Bytes {
		var b []byte
		for _, s := range []string{"a", "", "hello", "\x00\xff", "ünï", strings.Repeat("x", 300)} {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
			b = append(b, s...)
		}
		return b
	}
	if dt == Bool {
		return []byte{1, 0, 0, 1, 1, 0}
	}
	size := dt.Size()
	b := make([]byte, 6*size)
	for i := range b {
		// High bytes set, so sign extension and widths are exercised.
		b[i] = byte(0xF0 + i*7)
	}
	if dt == FP32 || dt == FP64 {
		// Finite values: NaN bit patterns need not survive float conversions.
		for i := range 6 {
			if dt == FP32 {
				binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(float32(i)*-1.25e7+0.5))
			} else {
				binary.LittleEndian.PutUint64(b[i*8:], math.Float64bits(float64(i)*-3.5e100+0.25))
			}
		}
	}
	return b
}

// pbSameTensors compares tensors, treating nil and empty slices as equal.
func pbSameTensors(t *testing.T, got, want []Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d tensors, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.Datatype != w.Datatype || !reflect.DeepEqual(append([]int64{}, g.Shape...), append([]int64{}, w.Shape...)) ||
			!bytes.Equal(g.Data, w.Data) || len(g.Parameters) != len(w.Parameters) || (len(w.Parameters) > 0 && !reflect.DeepEqual(g.Parameters, w.Parameters)) {
			t.Errorf("tensor %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func pbWire[M proto.Message](t *testing.T, m M, into M) M {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
	return into
}

func TestInferRequestRoundTripEveryDatatype(t *testing.T) {
	for _, dt := range DataTypes {
		for _, typed := range []bool{false, true} {
			name := string(dt) + "/raw"
			if typed {
				name = string(dt) + "/typed"
			}
			t.Run(name, func(t *testing.T) {
				req := &InferRequest{
					Model: "m", Version: "2", ID: "req-1",
					Parameters: Parameters{"sequence_id": uint64(7), "sequence_start": true},
					Inputs: []Tensor{
						{Name: "X", Datatype: dt, Shape: []int64{2, 3}, Data: pbTestData(dt), Parameters: Parameters{"p": "v"}},
						{Name: "EMPTY", Datatype: dt, Shape: []int64{0, 4}},
					},
					Outputs: []RequestedOutput{{Name: "Y", Parameters: Parameters{"binary_data": true}}},
				}
				m, err := inferRequestToPB(req, typed)
				if typed && (dt == FP16 || dt == BF16) {
					if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "'X'") {
						t.Fatalf("typed %s: err = %v, want InvalidArgument naming X", dt, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if typed != (len(m.RawInputContents) == 0) {
					t.Fatalf("typed=%v but %d raw entries", typed, len(m.RawInputContents))
				}
				got, err := InferRequestFromPB(pbWire(t, m, &inferencepb.ModelInferRequest{}))
				if err != nil {
					t.Fatal(err)
				}
				if got.Model != "m" || got.Version != "2" || got.ID != "req-1" || !reflect.DeepEqual(got.Parameters, req.Parameters) ||
					!reflect.DeepEqual(got.Outputs, req.Outputs) {
					t.Errorf("header: got %+v", got)
				}
				pbSameTensors(t, got.Inputs, req.Inputs)
			})
		}
	}
}

func TestInferResponseRoundTripEveryDatatype(t *testing.T) {
	for _, dt := range DataTypes {
		for _, typed := range []bool{false, true} {
			if typed && (dt == FP16 || dt == BF16) {
				continue
			}
			name := string(dt) + "/raw"
			if typed {
				name = string(dt) + "/typed"
			}
			t.Run(name, func(t *testing.T) {
				resp := &InferResponse{
					Model: "m", Version: "1", ID: "r",
					Parameters: Parameters{"x": 1.5},
					Outputs:    []Tensor{{Name: "Y", Datatype: dt, Shape: []int64{3, 2}, Data: pbTestData(dt)}},
				}
				m, err := inferResponseToPB(resp, typed)
				if err != nil {
					t.Fatal(err)
				}
				got, err := InferResponseFromPB(pbWire(t, m, &inferencepb.ModelInferResponse{}))
				if err != nil {
					t.Fatal(err)
				}
				if got.Model != "m" || got.Version != "1" || got.ID != "r" || !reflect.DeepEqual(got.Parameters, resp.Parameters) {
					t.Errorf("header: got %+v", got)
				}
				pbSameTensors(t, got.Outputs, resp.Outputs)
			})
		}
	}
}

// Typed contents decoded to raw bytes, checked against bytes written by hand.
func TestContentsToRawValues(t *testing.T) {
	tests := []struct {
		dt   DataType
		c    *inferencepb.InferTensorContents
		want []byte
	}{
		{Bool, &inferencepb.InferTensorContents{BoolContents: []bool{true, false}}, []byte{1, 0}},
		{Int8, &inferencepb.InferTensorContents{IntContents: []int32{-1, 127}}, []byte{0xFF, 0x7F}},
		{Int16, &inferencepb.InferTensorContents{IntContents: []int32{-2, 0x1234}}, []byte{0xFE, 0xFF, 0x34, 0x12}},
		{Int32, &inferencepb.InferTensorContents{IntContents: []int32{-2, 1}}, []byte{0xFE, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0}},
		{Int64, &inferencepb.InferTensorContents{Int64Contents: []int64{-1, 2}}, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0, 0, 0, 0, 0}},
		{Uint8, &inferencepb.InferTensorContents{UintContents: []uint32{255, 1}}, []byte{0xFF, 1}},
		{Uint16, &inferencepb.InferTensorContents{UintContents: []uint32{65534, 1}}, []byte{0xFE, 0xFF, 1, 0}},
		{Uint32, &inferencepb.InferTensorContents{UintContents: []uint32{0xDEADBEEF, 1}}, []byte{0xEF, 0xBE, 0xAD, 0xDE, 1, 0, 0, 0}},
		{Uint64, &inferencepb.InferTensorContents{Uint64Contents: []uint64{1 << 63, 1}}, []byte{0, 0, 0, 0, 0, 0, 0, 0x80, 1, 0, 0, 0, 0, 0, 0, 0}},
		{FP32, &inferencepb.InferTensorContents{Fp32Contents: []float32{1.5, -2}}, []byte{0, 0, 0xC0, 0x3F, 0, 0, 0, 0xC0}},
		{FP64, &inferencepb.InferTensorContents{Fp64Contents: []float64{1.5, -2}}, []byte{0, 0, 0, 0, 0, 0, 0xF8, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0xC0}},
		{Bytes, &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte("ab"), {}}}, []byte{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0}},
	}
	for _, tc := range tests {
		t.Run(string(tc.dt), func(t *testing.T) {
			m := &inferencepb.ModelInferRequest{Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
				{Name: "X", Datatype: string(tc.dt), Shape: []int64{2}, Contents: tc.c},
			}}
			req, err := InferRequestFromPB(m)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(req.Inputs[0].Data, tc.want) {
				t.Errorf("raw = % x, want % x", req.Inputs[0].Data, tc.want)
			}
			// And back: the typed encoding puts the same values in the same field.
			back, err := InferRequestToPBTyped(req)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(back.Inputs[0].Contents, tc.c) {
				t.Errorf("typed = %v, want %v", back.Inputs[0].Contents, tc.c)
			}
		})
	}
}

func TestInferRequestFromPBRejects(t *testing.T) {
	in := func(dt string, shape []int64, c *inferencepb.InferTensorContents) *inferencepb.ModelInferRequest_InferInputTensor {
		return &inferencepb.ModelInferRequest_InferInputTensor{Name: "IN0", Datatype: dt, Shape: shape, Contents: c}
	}
	fp32 := func(n int) *inferencepb.InferTensorContents {
		return &inferencepb.InferTensorContents{Fp32Contents: make([]float32, n)}
	}
	tests := []struct {
		name    string
		m       *inferencepb.ModelInferRequest
		wantMsg string
	}{
		{"mixed raw and contents", &inferencepb.ModelInferRequest{
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{in("FP32", []int64{2}, fp32(2))},
			RawInputContents: [][]byte{make([]byte, 8)},
		}, "'IN0'"},
		{"short raw data", &inferencepb.ModelInferRequest{
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{in("FP32", []int64{1, 16}, nil)},
			RawInputContents: [][]byte{make([]byte, 63)},
		}, "'IN0'"},
		{"long raw data", &inferencepb.ModelInferRequest{
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{in("INT64", []int64{2}, nil)},
			RawInputContents: [][]byte{make([]byte, 17)},
		}, "'IN0'"},
		{"BYTES prefix past the end", &inferencepb.ModelInferRequest{
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{in("BYTES", []int64{1}, nil)},
			RawInputContents: [][]byte{{5, 0, 0, 0, 'a', 'b'}},
		}, "'IN0'"},
		{"BYTES truncated prefix", &inferencepb.ModelInferRequest{
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{in("BYTES", []int64{2}, nil)},
			RawInputContents: [][]byte{{1, 0, 0, 0, 'a', 1, 0}},
		}, "'IN0'"},
		{"BYTES element count", &inferencepb.ModelInferRequest{
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{in("BYTES", []int64{3}, nil)},
			RawInputContents: [][]byte{{1, 0, 0, 0, 'a', 0, 0, 0, 0}},
		}, "'IN0'"},
		{"typed count mismatch", &inferencepb.ModelInferRequest{
			Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{in("FP32", []int64{2, 2}, fp32(3))},
		}, "'IN0'"},
		{"raw entry count", &inferencepb.ModelInferRequest{
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{in("FP32", []int64{1}, nil), in("FP32", []int64{1}, nil)},
			RawInputContents: [][]byte{make([]byte, 4)},
		}, "raw_input_contents"},
		{"wrong contents field", &inferencepb.ModelInferRequest{
			Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{in("FP32", []int64{1}, &inferencepb.InferTensorContents{IntContents: []int32{1}})},
		}, "int_contents"},
		{"INT8 out of range", &inferencepb.ModelInferRequest{
			Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{in("INT8", []int64{1}, &inferencepb.InferTensorContents{IntContents: []int32{200}})},
		}, "out of range"},
		{"UINT16 out of range", &inferencepb.ModelInferRequest{
			Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{in("UINT16", []int64{1}, &inferencepb.InferTensorContents{UintContents: []uint32{70000}})},
		}, "out of range"},
		{"FP16 typed", &inferencepb.ModelInferRequest{
			Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{in("FP16", []int64{1}, &inferencepb.InferTensorContents{Fp32Contents: []float32{1}})},
		}, "raw contents"},
		{"unknown datatype", &inferencepb.ModelInferRequest{
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{in("FLOAT", []int64{1}, nil)},
			RawInputContents: [][]byte{make([]byte, 4)},
		}, "FLOAT"},
		{"negative dimension", &inferencepb.ModelInferRequest{
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{in("FP32", []int64{-1, 4}, nil)},
			RawInputContents: [][]byte{make([]byte, 16)},
		}, "negative"},
		{"overflowing shape", &inferencepb.ModelInferRequest{
			Inputs:           []*inferencepb.ModelInferRequest_InferInputTensor{in("FP64", []int64{1 << 62, 4}, nil)},
			RawInputContents: [][]byte{nil},
		}, "overflows"},
		{"no data", &inferencepb.ModelInferRequest{
			Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{in("FP32", []int64{4}, nil)},
		}, "no data"},
		{"parameter without value", &inferencepb.ModelInferRequest{
			Parameters: map[string]*inferencepb.InferParameter{"empty": {}},
		}, "empty"},
		{"nil request", nil, "no request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := InferRequestFromPB(tc.m)
			if err == nil {
				t.Fatalf("accepted: %+v", req)
			}
			var ke *Error
			if !errors.As(err, &ke) || !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("err = %#v, want *Error InvalidArgument", err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("err = %q, want it to mention %q", err, tc.wantMsg)
			}
		})
	}
}

func TestInferRequestToPBRejects(t *testing.T) {
	tests := []struct {
		name string
		req  *InferRequest
	}{
		{"short data", &InferRequest{Inputs: []Tensor{{Name: "IN0", Datatype: FP32, Shape: []int64{2}, Data: make([]byte, 7)}}}},
		{"bad BYTES", &InferRequest{Inputs: []Tensor{{Name: "IN0", Datatype: Bytes, Shape: []int64{1}, Data: []byte{9, 0, 0, 0}}}}},
		{"unknown datatype", &InferRequest{Inputs: []Tensor{{Name: "IN0", Datatype: "F32", Shape: []int64{1}, Data: make([]byte, 4)}}}},
		{"bad parameter", &InferRequest{Parameters: Parameters{"IN0": []int{1}}}},
		{"bad tensor parameter", &InferRequest{Inputs: []Tensor{{Name: "IN0", Datatype: Bool, Shape: []int64{1}, Data: []byte{1}, Parameters: Parameters{"p": struct{}{}}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := InferRequestToPB(tc.req)
			if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "IN0") {
				t.Fatalf("err = %v, want InvalidArgument naming IN0", err)
			}
		})
	}
}

func TestInferResponseFromPBRejects(t *testing.T) {
	out := &inferencepb.ModelInferResponse_InferOutputTensor{Name: "OUT0", Datatype: "INT32", Shape: []int64{2},
		Contents: &inferencepb.InferTensorContents{IntContents: []int32{1, 2}}}
	m := &inferencepb.ModelInferResponse{Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{out}, RawOutputContents: [][]byte{make([]byte, 8)}}
	if _, err := InferResponseFromPB(m); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "'OUT0'") {
		t.Fatalf("mixed raw and contents: err = %v", err)
	}
	m.Outputs[0].Contents = nil
	m.RawOutputContents[0] = make([]byte, 4)
	if _, err := InferResponseFromPB(m); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "'OUT0'") {
		t.Fatalf("short raw: err = %v", err)
	}
}

func TestParametersRoundTrip(t *testing.T) {
	in := Parameters{"s": "x", "b": false, "i": int64(-3), "u": uint64(math.MaxUint64), "f": 0.25, "n": 5, "f32": float32(0.5), "u8": uint8(9)}
	want := Parameters{"s": "x", "b": false, "i": int64(-3), "u": uint64(math.MaxUint64), "f": 0.25, "n": int64(5), "f32": 0.5, "u8": uint64(9)}
	m, err := ParametersToPB(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParametersFromPB(pbWire(t, &inferencepb.ModelInferRequest{Parameters: m}, &inferencepb.ModelInferRequest{}).Parameters)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

func TestMetadataRoundTrip(t *testing.T) {
	sm := ServerMetadata{Name: "triton", Version: "2.50", Extensions: []string{ExtStatistics, ExtBinaryTensorData}}
	if got := ServerMetadataFromPB(pbWire(t, ServerMetadataToPB(sm), &inferencepb.ServerMetadataResponse{})); !reflect.DeepEqual(got, sm) {
		t.Errorf("server metadata: got %+v, want %+v", got, sm)
	}
	mm := ModelMetadata{
		Name: "resnet", Versions: []string{"1", "2"}, Platform: "onnxruntime_onnx",
		Inputs:  []TensorMetadata{{Name: "x", Datatype: FP32, Shape: []int64{-1, 3, 224, 224}}},
		Outputs: []TensorMetadata{{Name: "y", Datatype: Int64, Shape: []int64{-1, 1}}, {Name: "z", Datatype: Bytes, Shape: []int64{1}}},
	}
	if got := ModelMetadataFromPB(pbWire(t, ModelMetadataToPB(mm), &inferencepb.ModelMetadataResponse{})); !reflect.DeepEqual(got, mm) {
		t.Errorf("model metadata: got %+v, want %+v", got, mm)
	}
}

// Any bytes a client sends either decode to a request that encodes back to
// the same tensors, or give an InvalidArgument *Error; never a panic.
func FuzzInferRequestFromPB(f *testing.F) {
	for _, dt := range DataTypes {
		for _, typed := range []bool{false, true} {
			m, err := inferRequestToPB(&InferRequest{Model: "m", Inputs: []Tensor{{Name: "X", Datatype: dt, Shape: []int64{2, 3}, Data: pbTestData(dt)}}}, typed)
			if err != nil {
				continue
			}
			b, err := proto.Marshal(m)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m inferencepb.ModelInferRequest
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		req, err := InferRequestFromPB(&m)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("err = %v, want InvalidArgument", err)
			}
			return
		}
		again, err := InferRequestToPB(req)
		if err != nil {
			t.Fatalf("decoded request does not encode: %v", err)
		}
		back, err := InferRequestFromPB(again)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		pbSameTensors(t, back.Inputs, req.Inputs)
	})
}

package kserve

import (
	"encoding/binary"
	"math"
	"testing"
)

// fp32x16Response is the hot-path case: one FP32[1,16] output.
func fp32x16Response(tb testing.TB, bin bool) ([]byte, int) {
	var data []byte
	for i := range 16 {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(i)*0.37))
	}
	resp := &InferResponse{Model: "resnet", Version: "1", ID: "1234",
		Outputs: []Tensor{{Name: "output", Datatype: FP32, Shape: []int64{1, 16}, Data: data}}}
	var flags []bool
	if bin {
		flags = []bool{true}
	}
	body, jsonLen, err := EncodeInferResponse(nil, resp, flags)
	if err != nil {
		tb.Fatal(err)
	}
	return body, jsonLen
}

func benchmarkDecodeResponse(b *testing.B, bin bool) {
	body, jsonLen := fp32x16Response(b, bin)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		resp, err := DecodeInferResponse(body, jsonLen)
		if err != nil || len(resp.Outputs[0].Data) != 64 {
			b.Fatal(err)
		}
	}
}

func BenchmarkRESTDecodeInferResponseBinary(b *testing.B) { benchmarkDecodeResponse(b, true) }
func BenchmarkRESTDecodeInferResponseJSON(b *testing.B)   { benchmarkDecodeResponse(b, false) }

func BenchmarkRESTEncodeInferResponseJSON(b *testing.B) {
	body, jsonLen := fp32x16Response(b, false)
	resp, err := DecodeInferResponse(body, jsonLen)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		if buf, _, err = EncodeInferResponse(buf[:0], resp, nil); err != nil {
			b.Fatal(err)
		}
	}
}

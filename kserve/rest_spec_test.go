package kserve

import (
	"encoding/binary"
	"math"
	"reflect"
	"testing"
)

// The KServe v2 specification's JSON examples (PROTOCOL.md §1 shapes),
// decoded exactly.
func TestRESTSpecExamples(t *testing.T) {
	const request = `{
  "id" : "42",
  "parameters" : { "priority" : 2, "tag" : "spec" },
  "inputs" : [
    { "name" : "input0", "shape" : [ 2, 2 ], "datatype" : "UINT32", "data" : [ [ 1, 2 ], [ 3, 4 ] ] },
    { "name" : "input1", "shape" : [ 3 ], "datatype" : "BOOL", "data" : [ true, false, true ] }
  ],
  "outputs" : [ { "name" : "output0" }, { "name" : "output1", "parameters" : { "classification" : 3 } } ]
}`
	u32 := func(vs ...uint32) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		return b
	}
	wantReq := &InferRequest{
		ID:         "42",
		Parameters: Parameters{"priority": int64(2), "tag": "spec"},
		Inputs: []Tensor{
			{Name: "input0", Datatype: Uint32, Shape: []int64{2, 2}, Data: u32(1, 2, 3, 4)},
			{Name: "input1", Datatype: Bool, Shape: []int64{3}, Data: []byte{1, 0, 1}},
		},
		Outputs: []RequestedOutput{{Name: "output0"}, {Name: "output1", Parameters: Parameters{"classification": int64(3)}}},
	}
	gotReq, err := DecodeInferRequest([]byte(request), -1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotReq, wantReq) {
		t.Errorf("request:\n got %#v\nwant %#v", gotReq, wantReq)
	}

	const response = `{
  "model_name" : "mymodel",
  "model_version" : "1",
  "id" : "42",
  "outputs" : [
    { "name" : "output0", "shape" : [ 3, 2 ], "datatype" : "FP32", "data" : [ 1.0, 1.1, 2.0, 2.1, 3.0, 3.1 ] },
    { "name" : "output1", "shape" : [ 2 ], "datatype" : "BYTES", "data" : [ "cat", "" ] }
  ]
}`
	var fp []byte
	for _, v := range []float32{1.0, 1.1, 2.0, 2.1, 3.0, 3.1} {
		fp = binary.LittleEndian.AppendUint32(fp, math.Float32bits(v))
	}
	wantResp := &InferResponse{
		Model: "mymodel", Version: "1", ID: "42",
		Outputs: []Tensor{
			{Name: "output0", Datatype: FP32, Shape: []int64{3, 2}, Data: fp},
			{Name: "output1", Datatype: Bytes, Shape: []int64{2}, Data: []byte{3, 0, 0, 0, 'c', 'a', 't', 0, 0, 0, 0}},
		},
	}
	gotResp, err := DecodeInferResponse([]byte(response), -1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotResp, wantResp) {
		t.Errorf("response:\n got %#v\nwant %#v", gotResp, wantResp)
	}
}

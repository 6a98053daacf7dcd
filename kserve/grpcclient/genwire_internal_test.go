package grpcclient

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// Reading a streamed token's response allocates nothing: at LLM rates a
// decoded response per token would be the client's main cost.
func TestGenWireNoAllocs(t *testing.T) {
	b, err := proto.Marshal(&inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{ModelName: "llm", Id: "12345",
		Parameters: map[string]*inferencepb.InferParameter{genFinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: true}}},
		Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{
			{Name: genTextOutput, Datatype: "BYTES", Shape: []int64{1, 1}, Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte("tok")}}},
			{Name: genOutputIDs, Datatype: "INT32", Shape: []int64{1, 4}, Contents: &inferencepb.InferTensorContents{IntContents: []int32{1, 2, 3, 4}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var w genWire
	if n := testing.AllocsPerRun(100, func() { w.walk(b) }); n != 0 {
		t.Errorf("%v allocations per response, want 0", n)
	}
	if w.err != nil || !w.idOK || w.id != 12345 || !w.final || w.tokens() != 4 || w.text != 1 {
		t.Errorf("read %+v, want id 12345, final, 4 tokens from output_ids, 1 text element", w)
	}
}

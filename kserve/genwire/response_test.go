package genwire

import (
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
)

// Reading a streamed token's response allocates nothing: at LLM rates a
// decoded response per token would be the client's main cost.
func TestResponseWalkNoAllocs(t *testing.T) {
	b, err := proto.Marshal(&inferencepb.ModelStreamInferResponse{InferResponse: &inferencepb.ModelInferResponse{ModelName: "llm", Id: "12345",
		Parameters: map[string]*inferencepb.InferParameter{FinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: true}}},
		Outputs: []*inferencepb.ModelInferResponse_InferOutputTensor{
			{Name: TextOutput, Datatype: "BYTES", Shape: []int64{1, 1}, Contents: &inferencepb.InferTensorContents{BytesContents: [][]byte{[]byte("tok")}}},
			{Name: OutputIDs, Datatype: "INT32", Shape: []int64{1, 4}, Contents: &inferencepb.InferTensorContents{IntContents: []int32{1, 2, 3, 4}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var w Response
	if n := testing.AllocsPerRun(100, func() { w.Walk(b) }); n != 0 {
		t.Errorf("%v allocations per response, want 0", n)
	}
	if w.Err != nil || !w.IDOK || w.ID != 12345 || !w.Final || w.Tokens() != 4 || w.Text != 1 {
		t.Errorf("read %+v, want id 12345, final, 4 tokens from output_ids, 1 text element", w)
	}
}

// FuzzResponseWalk: reading any bytes never panics, and what a response that
// protobuf also decodes says (its id, final flag, token count) is what the
// decoded message says.
func FuzzResponseWalk(f *testing.F) {
	for _, r := range []*inferencepb.ModelStreamInferResponse{
		{InferResponse: &inferencepb.ModelInferResponse{Id: "7",
			Parameters: map[string]*inferencepb.InferParameter{FinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: true}}},
			Outputs:    []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: OutputIDs, Shape: []int64{1, 3}}, {Name: TextOutput, Shape: []int64{1}}}}},
		{ErrorMessage: "boom", InferResponse: &inferencepb.ModelInferResponse{Id: "x"}},
		{},
	} {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var w Response
		w.Walk(b)
		var m inferencepb.ModelStreamInferResponse
		if w.Err != nil || proto.Unmarshal(b, &m) != nil {
			return
		}
		ir := m.GetInferResponse()
		if w.ErrMsg != m.GetErrorMessage() || w.Infer != (ir != nil) {
			t.Fatalf("error %q infer %v, decoded %q %v", w.ErrMsg, w.Infer, m.GetErrorMessage(), ir != nil)
		}
		if id := ir.GetId(); w.IDOK && strconv.FormatUint(w.ID, 10) != strings.TrimLeft(id, "0") && !(w.ID == 0 && strings.Trim(id, "0") == "") {
			t.Fatalf("id %d, decoded %q", w.ID, id)
		}
		if final := ir.GetParameters()[FinalParam].GetBoolParam(); w.Final != final {
			t.Fatalf("final %v, decoded %v", w.Final, final)
		}
		ids, seen, text := 0, false, 0
		for _, o := range ir.GetOutputs() {
			n := 1
			for _, d := range o.GetShape() {
				n *= int(d)
			}
			switch o.GetName() {
			case OutputIDs:
				ids, seen = ids+n, true
			case TextOutput:
				text += n
			}
		}
		if w.IDs != ids || w.IDsSeen != seen || w.Text != text {
			t.Fatalf("ids %d (%v) text %d, decoded %d (%v) %d", w.IDs, w.IDsSeen, w.Text, ids, seen, text)
		}
	})
}

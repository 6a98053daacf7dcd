package grpcclient

import (
	"strconv"
	"strings"
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

// FuzzGenWire: reading any bytes never panics, and what a response that
// protobuf also decodes says (its id, final flag, token count) is what the
// decoded message says.
func FuzzGenWire(f *testing.F) {
	for _, r := range []*inferencepb.ModelStreamInferResponse{
		{InferResponse: &inferencepb.ModelInferResponse{Id: "7",
			Parameters: map[string]*inferencepb.InferParameter{genFinalParam: {ParameterChoice: &inferencepb.InferParameter_BoolParam{BoolParam: true}}},
			Outputs:    []*inferencepb.ModelInferResponse_InferOutputTensor{{Name: genOutputIDs, Shape: []int64{1, 3}}, {Name: genTextOutput, Shape: []int64{1}}}}},
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
		var w genWire
		w.walk(b)
		var m inferencepb.ModelStreamInferResponse
		if w.err != nil || proto.Unmarshal(b, &m) != nil {
			return
		}
		ir := m.GetInferResponse()
		if w.errMsg != m.GetErrorMessage() || w.infer != (ir != nil) {
			t.Fatalf("error %q infer %v, decoded %q %v", w.errMsg, w.infer, m.GetErrorMessage(), ir != nil)
		}
		if id := ir.GetId(); w.idOK && strconv.FormatUint(w.id, 10) != strings.TrimLeft(id, "0") && !(w.id == 0 && strings.Trim(id, "0") == "") {
			t.Fatalf("id %d, decoded %q", w.id, id)
		}
		if final := ir.GetParameters()[genFinalParam].GetBoolParam(); w.final != final {
			t.Fatalf("final %v, decoded %v", w.final, final)
		}
		ids, seen, text := 0, false, 0
		for _, o := range ir.GetOutputs() {
			n := 1
			for _, d := range o.GetShape() {
				n *= int(d)
			}
			switch o.GetName() {
			case genOutputIDs:
				ids, seen = ids+n, true
			case genTextOutput:
				text += n
			}
		}
		if w.ids != ids || w.idsSeen != seen || w.text != text {
			t.Fatalf("ids %d (%v) text %d, decoded %d (%v) %d", w.ids, w.idsSeen, w.text, ids, seen, text)
		}
	})
}

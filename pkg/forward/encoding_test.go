package forward

import (
	"context"
	"maps"
	"reflect"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
)

// recordingUpstream keeps the request it was sent and answers every call
// with one shared response, as a caching upstream might.
type recordingUpstream struct {
	Upstream // only Infer is called
	got      *kserve.InferRequest
	answer   *kserve.InferResponse
}

func (u *recordingUpstream) Infer(_ context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	u.got = req
	return u.answer, nil
}

// The front client's binary extension parameters stay on the front's request
// (kserve/server encodes its answer from them) but do not reach the
// upstream; the upstream's binary_data_size does not reach the front; the
// other parameters cross untouched, and neither side's values are changed.
func TestInferDropsEncodingParameters(t *testing.T) {
	data := []byte{1, 2, 3, 4}
	req := &kserve.InferRequest{
		Model:      "m",
		Parameters: kserve.Parameters{kserve.ParamBinaryDataOutput: true, "priority": int64(1)},
		Inputs: []kserve.Tensor{{Name: "IN", Datatype: kserve.FP32, Shape: []int64{1}, Data: data,
			Parameters: kserve.Parameters{kserve.ParamBinaryDataSize: int64(4)}}},
		Outputs: []kserve.RequestedOutput{
			{Name: "OUT", Parameters: kserve.Parameters{kserve.ParamBinaryData: true, "classification": int64(2)}},
			{Name: "OUT2", Parameters: kserve.Parameters{kserve.ParamBinaryData: false}},
		},
	}
	before := cloneRequest(req)
	shared := &kserve.InferResponse{Model: "m", Outputs: []kserve.Tensor{{Name: "OUT", Datatype: kserve.FP32, Shape: []int64{1}, Data: data,
		Parameters: kserve.Parameters{kserve.ParamBinaryDataSize: int64(4), "unit": "m"}}}}
	up := &recordingUpstream{answer: shared}
	b, err := New([]Target{{Name: "u", Upstream: up}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.Infer(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}

	want := &kserve.InferRequest{
		Model:      "m",
		Parameters: kserve.Parameters{"priority": int64(1)},
		Inputs:     []kserve.Tensor{{Name: "IN", Datatype: kserve.FP32, Shape: []int64{1}, Data: data}},
		Outputs:    []kserve.RequestedOutput{{Name: "OUT", Parameters: kserve.Parameters{"classification": int64(2)}}, {Name: "OUT2"}},
	}
	if !reflect.DeepEqual(up.got, want) {
		t.Errorf("upstream got %+v\nwant %+v", up.got, want)
	}
	if !reflect.DeepEqual(req, before) {
		t.Errorf("the front's request changed: %+v\nwas %+v", req, before)
	}
	if p := resp.Outputs[0].Parameters; !reflect.DeepEqual(p, kserve.Parameters{"unit": "m"}) {
		t.Errorf("front's output parameters %v, want only unit", p)
	}
	if _, ok := shared.Outputs[0].Parameters[kserve.ParamBinaryDataSize]; !ok {
		t.Error("the upstream's shared answer was changed")
	}

	// Without such parameters nothing is copied.
	plain := &kserve.InferRequest{Model: "m", Inputs: want.Inputs}
	up.answer = &kserve.InferResponse{Model: "m", Outputs: want.Inputs}
	if resp, err = b.Infer(t.Context(), plain); err != nil {
		t.Fatal(err)
	}
	if up.got != plain || resp != up.answer {
		t.Error("a request and answer without encoding parameters were copied")
	}
}

func cloneRequest(r *kserve.InferRequest) *kserve.InferRequest {
	c := *r
	c.Parameters = maps.Clone(r.Parameters)
	c.Inputs = append([]kserve.Tensor(nil), r.Inputs...)
	for i := range c.Inputs {
		c.Inputs[i].Parameters = maps.Clone(r.Inputs[i].Parameters)
	}
	c.Outputs = append([]kserve.RequestedOutput(nil), r.Outputs...)
	for i := range c.Outputs {
		c.Outputs[i].Parameters = maps.Clone(r.Outputs[i].Parameters)
	}
	return &c
}

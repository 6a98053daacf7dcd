package main

import (
	"context"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve"
)

// TestAnswersMatchTheMetadata: every form of the answer to a request of any
// batch passes the answer check of a run against the metadata nullserver
// reports.
func TestAnswersMatchTheMetadata(t *testing.T) {
	f, err := newFixed()
	if err != nil {
		t.Fatal(err)
	}
	md, err := nullBackend{f: f}.ModelMetadata(context.Background(), modelName, "")
	if err != nil {
		t.Fatal(err)
	}
	want := kserve.NewExpect(modelName, md.Outputs, true)
	for _, n := range []int{1, 3, maxBatch, maxBatch + 2} {
		req := &kserve.InferRequest{Model: modelName, Inputs: []kserve.Tensor{
			{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{int64(n), 16}, Data: make([]byte, 64*n)}}}
		bin, jsonLen, err := kserve.EncodeInferRequest(nil, req, true)
		if err != nil {
			t.Fatal(err)
		}
		plain, _, err := kserve.EncodeInferRequest(nil, req, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := batchOf(bin[:jsonLen]); got != int64(n) {
			t.Errorf("batch %d read as %d from the binary request", n, got)
		}
		if got := batchOf(plain); got != int64(n) {
			t.Errorf("batch %d read as %d from the JSON request", n, got)
		}
		e := f.answer(int64(n))
		hl, _ := strconv.Atoi(e.binJSONLen)
		pb, err := proto.Marshal(e.pb)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := nullBackend{f: f}.Infer(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for form, err := range map[string]error{
			"binary":  want.CheckJSON(e.binBody[:hl], n),
			"JSON":    want.CheckJSON(e.jsonBody, n),
			"gRPC":    want.CheckProto(pb, n),
			"control": want.CheckResponse(resp, n),
		} {
			if err != nil {
				t.Errorf("batch %d, %s answer: %v", n, form, err)
			}
		}
	}
}

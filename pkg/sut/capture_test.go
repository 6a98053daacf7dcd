package sut

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// echoCapturer answers each request with two outputs: OUT0 echoing the
// input, OUT1 a BYTES element per sample holding the sample's first byte
// repeated (variable length), so splitting both kinds is exercised.
type echoCapturer struct {
	fakeClient
	shape func(n int64) []int64 // OUT0's shape; default the input's
}

func (e *echoCapturer) PrepareCapture(req *kserve.InferRequest) (CaptureCall, error) {
	return func(context.Context) (*kserve.InferResponse, error) {
		in := req.Inputs[0]
		n := in.Shape[0]
		per := len(in.Data) / int(n)
		var bytesOut []byte
		for k := range int(n) {
			el := slices.Repeat([]byte{in.Data[k*per]}, k+1)
			bytesOut = append(bytesOut, byte(len(el)), 0, 0, 0)
			bytesOut = append(bytesOut, el...)
		}
		shape := in.Shape
		if e.shape != nil {
			shape = e.shape(n)
		}
		return &kserve.InferResponse{Outputs: []kserve.Tensor{
			{Name: "OUT0", Datatype: in.Datatype, Shape: shape, Data: slices.Clone(in.Data)},
			{Name: "OUT1", Datatype: kserve.Bytes, Shape: []int64{n, 1}, Data: bytesOut},
		}}, nil
	}, nil
}

func TestCaptureSplitsResponsesPerSample(t *testing.T) {
	lib := library(t, true)
	n, err := New(&echoCapturer{}, lib, Options{Model: "m", MaxBatch: 8, Capture: true, WholeQueries: true})
	if err != nil {
		t.Fatal(err)
	}
	q := loadgen.Query{ID: 1, Samples: []int{9, 3, 40}}
	c := newCollector(3)
	n.IssueQuery(t.Context(), q, c.done)
	<-c.all
	if len(c.got) != 1 || c.got[0].Err != nil || len(c.got[0].Data) != 3 {
		t.Fatalf("completions %+v, want one with 3 responses", c.got)
	}
	for k, idx := range q.Samples {
		in := lib.Sample(idx).Inputs[0].Data
		want := slices.Clone(in)
		want = append(want, byte(k+1), 0, 0, 0)
		want = append(want, slices.Repeat([]byte{in[0]}, k+1)...)
		if got := c.got[0].Data[k]; !slices.Equal(got, want) {
			t.Errorf("sample %d: captured %x, want %x", idx, got, want)
		}
	}
	l := n.Layout()
	if fmt.Sprint(l) != "[{OUT0 FP32 [4]} {OUT1 BYTES [1]}]" {
		t.Errorf("layout %v", l)
	}
}

func TestCaptureRejectsMalformedResponses(t *testing.T) {
	lib := library(t, true)
	ec := &echoCapturer{shape: func(n int64) []int64 { return []int64{n + 1, 4} }}
	n, err := New(ec, lib, Options{Model: "m", MaxBatch: 8, Capture: true, WholeQueries: true})
	if err != nil {
		t.Fatal(err)
	}
	c := newCollector(2)
	n.IssueQuery(t.Context(), loadgen.Query{Samples: []int{1, 2}}, c.done)
	<-c.all
	if len(c.got) != 1 || !errors.Is(c.got[0].Err, kserve.ErrMalformed) || c.got[0].Data != nil {
		t.Fatalf("completions %+v, want one malformed-response failure", c.got)
	}
}

func TestCaptureNeedsACapturer(t *testing.T) {
	if _, err := New(&fakeClient{}, library(t, false), Options{Model: "m", Capture: true}); err == nil {
		t.Fatal("a client that cannot return responses was accepted for capture")
	}
}

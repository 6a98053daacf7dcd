package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
)

var _ server.Backend = (*Server)(nil)

func int32s(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func fp32s(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// zeroLatency is DefaultModels with every delay removed, so that the tests
// of outputs and checks need no clock.
func zeroLatency(t *testing.T) *Server {
	t.Helper()
	specs := DefaultModels()
	for i := range specs {
		specs[i].Latency = LatencySpec{}
	}
	s, err := New(specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func seq(n int, f func(i int) int32) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestAddSub(t *testing.T) {
	s := zeroLatency(t)
	a := seq(32, func(i int) int32 { return int32(i * 1000) })
	b := seq(32, func(i int) int32 { return int32(7 - i) })
	a[0], b[0] = math.MaxInt32, 1 // wraps on add
	a[1], b[1] = math.MinInt32, 1 // wraps on subtract
	resp, err := s.Infer(context.Background(), &kserve.InferRequest{
		Model: "simple", ID: "req-7",
		Inputs: []kserve.Tensor{
			{Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{2, 16}, Data: int32s(b...)},
			{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{2, 16}, Data: int32s(a...)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ID != "req-7" || resp.Model != "simple" || resp.Version != "1" {
		t.Errorf("response names %q %q %q, want simple 1 req-7", resp.Model, resp.Version, resp.ID)
	}
	sum, diff := make([]int32, 32), make([]int32, 32)
	for i := range a {
		sum[i] = int32(int64(a[i]) + int64(b[i])) // truncation is the wrap-around
		diff[i] = int32(int64(a[i]) - int64(b[i]))
	}
	want := map[string][]byte{"OUTPUT0": int32s(sum...), "OUTPUT1": int32s(diff...)}
	if len(resp.Outputs) != 2 {
		t.Fatalf("%d outputs, want 2", len(resp.Outputs))
	}
	for _, o := range resp.Outputs {
		if !slices.Equal(o.Data, want[o.Name]) || !slices.Equal(o.Shape, []int64{2, 16}) || o.Datatype != kserve.Int32 {
			t.Errorf("%s: %s %v, wrong data or shape", o.Name, o.Datatype, o.Shape)
		}
	}
}

func TestEchoCopiesInputs(t *testing.T) {
	s := zeroLatency(t)
	in := fp32s(seq16f(3)...)
	resp, err := s.Infer(context.Background(), &kserve.InferRequest{
		Model:  "identity",
		Inputs: []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{3, 16}, Data: in}},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := resp.Outputs[0]
	if o.Name != "OUTPUT0" || !slices.Equal(o.Data, in) || !slices.Equal(o.Shape, []int64{3, 16}) {
		t.Fatalf("echo answered %s %v", o.Name, o.Shape)
	}
	in[0] ^= 0xff
	if o.Data[0] == in[0] {
		t.Error("output aliases the request's buffer")
	}
}

func seq16f(n int) []float32 {
	out := make([]float32, 16*n)
	for i := range out {
		out[i] = float32(i) * 0.5
	}
	return out
}

func TestClassifyTopClassIsFNVOfTheSample(t *testing.T) {
	s := zeroLatency(t)
	const n, per = 3, 3 * 32 * 32
	data := make([]byte, n*per*4)
	for i := range data {
		data[i] = byte(i*7 + i/5)
	}
	resp, err := s.Infer(context.Background(), &kserve.InferRequest{
		Model:  "classifier",
		Inputs: []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{n, 3, 32, 32}, Data: data}},
	})
	if err != nil {
		t.Fatal(err)
	}
	o := resp.Outputs[0]
	if !slices.Equal(o.Shape, []int64{n, 1000}) || o.Datatype != kserve.FP32 || len(o.Data) != n*1000*4 {
		t.Fatalf("classify answered %s %v with %d bytes", o.Datatype, o.Shape, len(o.Data))
	}
	for k := range n {
		sample := data[k*per*4 : (k+1)*per*4]
		h := fnv.New64a()
		h.Write(sample)
		want := int(h.Sum64() % 1000)
		if got := ExpectedClass(sample, 1000); got != want {
			t.Errorf("sample %d: ExpectedClass %d, FNV-1a says %d", k, got, want)
		}
		if got := argmax(o.Data[k*4000 : (k+1)*4000]); got != want {
			t.Errorf("sample %d: top class %d, want %d", k, got, want)
		}
	}
}

func argmax(row []byte) int {
	best, at := float32(math.Inf(-1)), -1
	for c := 0; c < len(row)/4; c++ {
		if v := math.Float32frombits(binary.LittleEndian.Uint32(row[4*c:])); v > best {
			best, at = v, c
		}
	}
	return at
}

func TestClassifyBytesSamples(t *testing.T) {
	spec := ModelSpec{Name: "txt", MaxBatchSize: 4, Function: Classify, NumClasses: 7,
		Inputs: []TensorSpec{{Name: "TEXT", Datatype: kserve.Bytes, Shape: []int64{-1, 2}}}}
	s, err := New([]ModelSpec{spec})
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	var samples [][]byte
	for k, words := range [][]string{{"a", "bb"}, {"", "hello"}} {
		start := len(data)
		for _, w := range words {
			data = binary.LittleEndian.AppendUint32(data, uint32(len(w)))
			data = append(data, w...)
		}
		samples = append(samples, data[start:])
		_ = k
	}
	resp, err := s.Infer(context.Background(), &kserve.InferRequest{Model: "txt",
		Inputs: []kserve.Tensor{{Name: "TEXT", Datatype: kserve.Bytes, Shape: []int64{2, 2}, Data: data}}})
	if err != nil {
		t.Fatal(err)
	}
	for k, sample := range samples {
		h := fnv.New64a()
		h.Write(sample)
		if got, want := argmax(resp.Outputs[0].Data[k*28:(k+1)*28]), int(h.Sum64()%7); got != want {
			t.Errorf("sample %d: class %d, want %d", k, got, want)
		}
	}
}

func TestInferRejects(t *testing.T) {
	s := zeroLatency(t)
	ok := func() []kserve.Tensor {
		return []kserve.Tensor{
			{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: make([]byte, 64)},
			{Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: make([]byte, 64)},
		}
	}
	with := func(f func(in []kserve.Tensor) []kserve.Tensor) []kserve.Tensor { return f(ok()) }
	tests := []struct {
		name    string
		req     kserve.InferRequest
		want    error
		mention string
	}{
		{"unknown model", kserve.InferRequest{Model: "nope", Inputs: ok()}, kserve.ErrNotFound, "nope"},
		{"unknown version", kserve.InferRequest{Model: "simple", Version: "9", Inputs: ok()}, kserve.ErrNotFound, "9"},
		{"missing input", kserve.InferRequest{Model: "simple", Inputs: ok()[:1]}, kserve.ErrInvalidArgument, "INPUT1"},
		{"unknown input", kserve.InferRequest{Model: "simple", Inputs: with(func(in []kserve.Tensor) []kserve.Tensor {
			in[1].Name = "INPUT9"
			return in
		})}, kserve.ErrInvalidArgument, "INPUT9"},
		{"input twice", kserve.InferRequest{Model: "simple", Inputs: append(ok(), ok()[0])}, kserve.ErrInvalidArgument, "INPUT0"},
		{"wrong datatype", kserve.InferRequest{Model: "simple", Inputs: with(func(in []kserve.Tensor) []kserve.Tensor {
			in[1].Datatype = kserve.FP32
			return in
		})}, kserve.ErrInvalidArgument, "INPUT1"},
		{"wrong dims", kserve.InferRequest{Model: "simple", Inputs: with(func(in []kserve.Tensor) []kserve.Tensor {
			in[0].Shape, in[0].Data = []int64{2, 8}, make([]byte, 64)
			return in
		})}, kserve.ErrInvalidArgument, "INPUT0"},
		{"wrong rank", kserve.InferRequest{Model: "simple", Inputs: with(func(in []kserve.Tensor) []kserve.Tensor {
			in[0].Shape = []int64{16}
			return in
		})}, kserve.ErrInvalidArgument, "INPUT0"},
		{"batch too big", kserve.InferRequest{Model: "simple", Inputs: with(func(in []kserve.Tensor) []kserve.Tensor {
			for i := range in {
				in[i].Shape, in[i].Data = []int64{9, 16}, make([]byte, 9*64)
			}
			return in
		})}, kserve.ErrInvalidArgument, "batch size 9"},
		{"batch sizes differ", kserve.InferRequest{Model: "simple", Inputs: with(func(in []kserve.Tensor) []kserve.Tensor {
			in[1].Shape, in[1].Data = []int64{2, 16}, make([]byte, 128)
			return in
		})}, kserve.ErrInvalidArgument, "INPUT1"},
		{"short data", kserve.InferRequest{Model: "simple", Inputs: with(func(in []kserve.Tensor) []kserve.Tensor {
			in[1].Data = in[1].Data[:60]
			return in
		})}, kserve.ErrInvalidArgument, "INPUT1"},
		{"unknown output", kserve.InferRequest{Model: "simple", Inputs: ok(), Outputs: []kserve.RequestedOutput{{Name: "OUTPUT7"}}}, kserve.ErrInvalidArgument, "OUTPUT7"},
		{"output twice", kserve.InferRequest{Model: "simple", Inputs: ok(), Outputs: []kserve.RequestedOutput{{Name: "OUTPUT1"}, {Name: "OUTPUT1"}}}, kserve.ErrInvalidArgument, "OUTPUT1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Infer(context.Background(), &tt.req)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not name %q", err, tt.mention)
			}
		})
	}
	st, _ := s.ModelStatistics(context.Background(), "simple", "")
	if got := st.ModelStats[0].InferenceStats.Fail.Count; got != uint64(len(tests)-2) {
		t.Errorf("fail count %d, want %d (the model's rejections)", got, len(tests)-2)
	}
}

func TestRequestedOutputsInOrder(t *testing.T) {
	s := zeroLatency(t)
	in := []kserve.Tensor{
		{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: int32s(seq(16, func(i int) int32 { return int32(i) })...)},
		{Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: int32s(seq(16, func(int) int32 { return 1 })...)},
	}
	resp, err := s.Infer(context.Background(), &kserve.InferRequest{Model: "simple", Inputs: in, Outputs: []kserve.RequestedOutput{{Name: "OUTPUT1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Outputs) != 1 || resp.Outputs[0].Name != "OUTPUT1" {
		t.Fatalf("outputs %v, want OUTPUT1 only", resp.Outputs)
	}
	if got := int32(binary.LittleEndian.Uint32(resp.Outputs[0].Data[8:])); got != 1 {
		t.Errorf("OUTPUT1[2] = %d, want 2-1", got)
	}
}

func TestErrorCodes(t *testing.T) {
	var ke *kserve.Error
	_, err := zeroLatency(t).Infer(context.Background(), &kserve.InferRequest{Model: "x"})
	if !errors.As(err, &ke) || ke.Code != codes.NotFound || ke.HTTPStatus != 404 {
		t.Errorf("unknown model: %v, want *kserve.Error NotFound 404", err)
	}
}

package kserve

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// expectModel is a batching model with two outputs, one with a variable
// dimension.
var expectModel = []TensorMetadata{
	{Name: "SCORES", Datatype: FP32, Shape: []int64{-1, 4}},
	{Name: "LABELS", Datatype: Int64, Shape: []int64{-1, -1}},
}

func expectTensor(name string, dt DataType, shape ...int64) Tensor {
	return Tensor{Name: name, Datatype: dt, Shape: shape, Data: make([]byte, ElementCount(shape)*int64(dt.Size()))}
}

// encoded is an answer in every encoded form a client checks: the JSON
// header of a binary-extension body, a JSON body with its data, and the
// gRPC message.
func encoded(t testing.TB, resp *InferResponse) (header, jsonBody, pb []byte) {
	t.Helper()
	bin := make([]bool, len(resp.Outputs))
	for i := range bin {
		bin[i] = true
	}
	body, n, err := EncodeInferResponse(nil, resp, bin)
	if err != nil {
		t.Fatal(err)
	}
	header = body
	if n >= 0 {
		header = body[:n]
	}
	if jsonBody, _, err = EncodeInferResponse(nil, resp, nil); err != nil {
		t.Fatal(err)
	}
	m, err := InferResponseToPB(resp)
	if err != nil {
		t.Fatal(err)
	}
	if pb, err = proto.Marshal(m); err != nil {
		t.Fatal(err)
	}
	return header, jsonBody, pb
}

// encodings are the checks of an answer in every form, decoded too.
func encodings(t *testing.T, resp *InferResponse) map[string]func(e *Expect, batch int) error {
	t.Helper()
	header, jsonBody, pb := encoded(t, resp)
	return map[string]func(*Expect, int) error{
		"binary header": func(e *Expect, batch int) error { return e.CheckJSON(header, batch) },
		"JSON body":     func(e *Expect, batch int) error { return e.CheckJSON(jsonBody, batch) },
		"protobuf":      func(e *Expect, batch int) error { return e.CheckProto(pb, batch) },
		"decoded":       func(e *Expect, batch int) error { return e.CheckResponse(resp, batch) },
	}
}

func TestExpectAnswers(t *testing.T) {
	good := func() []Tensor {
		return []Tensor{expectTensor("SCORES", FP32, 3, 4), expectTensor("LABELS", Int64, 3, 7)}
	}
	cases := []struct {
		name    string
		model   string
		outputs []Tensor
		want    string // "" for a match, else a part of the mismatch's message
	}{
		{"correct", "m", good(), ""},
		{"outputs in another order", "m", []Tensor{good()[1], good()[0]}, ""},
		{"no outputs", "m", nil, "no outputs"},
		{"wrong output name", "m", []Tensor{expectTensor("PROBS", FP32, 3, 4), good()[1]}, `output "PROBS" is not one of the model's`},
		{"wrong datatype", "m", []Tensor{expectTensor("SCORES", Int32, 3, 4), good()[1]}, `datatype "INT32", want "FP32"`},
		{"wrong batch dimension", "m", []Tensor{expectTensor("SCORES", FP32, 1, 4), good()[1]}, "shape [1 4], want [3 4]"},
		{"wrong dimension", "m", []Tensor{expectTensor("SCORES", FP32, 3, 5), good()[1]}, "shape [3 5], want [3 4]"},
		{"wrong rank", "m", []Tensor{expectTensor("SCORES", FP32, 12), good()[1]}, "shape [12], want [3 4]"},
		{"an output missing", "m", good()[:1], `output "LABELS" missing`},
		{"an output twice", "m", append(good(), good()[0]), `"SCORES" answered twice`},
		{"another model", "other", good(), `model "other" answered, want "m"`},
		{"no model name", "", good(), `model "" answered, want "m"`},
	}
	e := NewExpect("m", expectModel, true)
	for _, c := range cases {
		for form, check := range encodings(t, &InferResponse{Model: c.model, Outputs: c.outputs}) {
			t.Run(c.name+"/"+form, func(t *testing.T) {
				err := check(e, 3)
				switch {
				case c.want == "" && err != nil:
					t.Fatalf("a matching answer fails: %v", err)
				case c.want == "":
				case !errors.Is(err, ErrBadResponse) || errors.Is(err, ErrMalformed):
					t.Fatalf("err %v: want ErrBadResponse", err)
				case !strings.Contains(err.Error(), c.want):
					t.Errorf("err %q: want it to say %q", err, c.want)
				}
			})
		}
	}
}

func TestExpectUnbatchedAndUnlisted(t *testing.T) {
	// Not batched: the shape is the metadata's, -1 any size; batch ignored.
	e := NewExpect("m", []TensorMetadata{{Name: "OUT", Datatype: FP64, Shape: []int64{2, -1}}}, false)
	for _, c := range []struct {
		shape []int64
		ok    bool
	}{{[]int64{2, 9}, true}, {[]int64{2, 1}, true}, {[]int64{1, 9}, false}, {[]int64{2}, false}} {
		for form, check := range encodings(t, &InferResponse{Model: "m", Outputs: []Tensor{expectTensor("OUT", FP64, c.shape...)}}) {
			if err := check(e, 5); (err == nil) != c.ok {
				t.Errorf("%s: shape %v: err %v, want ok %v", form, c.shape, err, c.ok)
			}
		}
	}
	// Batched, but a first dimension the metadata fixes is no batch
	// dimension: the answer must have it as it is.
	e = NewExpect("m", []TensorMetadata{{Name: "OUT", Datatype: FP64, Shape: []int64{2, 3}}}, true)
	for _, c := range []struct {
		shape []int64
		ok    bool
	}{{[]int64{2, 3}, true}, {[]int64{5, 3}, false}} {
		for form, check := range encodings(t, &InferResponse{Model: "m", Outputs: []Tensor{expectTensor("OUT", FP64, c.shape...)}}) {
			if err := check(e, 5); (err == nil) != c.ok {
				t.Errorf("%s: fixed first dimension, shape %v: err %v, want ok %v", form, c.shape, err, c.ok)
			}
		}
	}
	// Metadata without outputs: any output will do, none will not.
	e = NewExpect("m", nil, true)
	for form, check := range encodings(t, &InferResponse{Model: "m", Outputs: []Tensor{expectTensor("X", Uint8, 1)}}) {
		if err := check(e, 5); err != nil {
			t.Errorf("%s: %v", form, err)
		}
	}
	for form, check := range encodings(t, &InferResponse{Model: "m"}) {
		if err := check(e, 5); !errors.Is(err, ErrBadResponse) {
			t.Errorf("%s: no outputs: err %v", form, err)
		}
	}
	var none *Expect
	if none.CheckJSON([]byte("not JSON"), 1) != nil || none.CheckProto([]byte{0xff}, 1) != nil {
		t.Error("a nil Expect checks")
	}
}

func TestExpectJSONForms(t *testing.T) {
	e := NewExpect("m", []TensorMetadata{{Name: "OUT", Datatype: FP32, Shape: []int64{-1, 2}}}, true)
	for _, c := range []struct {
		name, json string
		err        error
	}{
		{"fields in any order", `{"outputs":[{"shape":[4,2],"data":[1,2,3,4,5,6,7,8],"datatype":"FP32","name":"OUT"}],"id":"x","model_name":"m"}`, nil},
		{"escaped names", `{"model_name":"\u006d","outputs":[{"name":"O\u0055T","datatype":"FP\u00332","shape":[4,2]}]}`, nil},
		{"parameters skipped", `{"model_name":"m","parameters":{"a":{"b":[1]}},"outputs":[{"name":"OUT","datatype":"FP32","shape":[ 4 , 2 ],"parameters":{"binary_data_size":32}}]}`, nil},
		{"outputs null", `{"model_name":"m","outputs":null}`, ErrBadResponse},
		{"no shape", `{"model_name":"m","outputs":[{"name":"OUT","datatype":"FP32"}]}`, ErrBadResponse},
		{"negative dimension", `{"model_name":"m","outputs":[{"name":"OUT","datatype":"FP32","shape":[4,-1]}]}`, ErrBadResponse},
		{"no model name", `{"outputs":[{"name":"OUT","datatype":"FP32","shape":[4,2]}]}`, ErrBadResponse},
		{"too many dimensions", `{"model_name":"m","outputs":[{"name":"OUT","datatype":"FP32","shape":[` + strings.Repeat("1,", 40) + `1]}]}`, ErrBadResponse},
		{"float dimension", `{"model_name":"m","outputs":[{"name":"OUT","datatype":"FP32","shape":[4.0,2]}]}`, ErrMalformed},
		{"broken JSON", `{"model_name":"m","outputs":[{"name":"OUT"`, ErrMalformed},
		{"trailing bytes", `{"model_name":"m","outputs":[{"name":"OUT","datatype":"FP32","shape":[4,2]}]}x`, ErrMalformed},
		{"not an object", `[]`, ErrMalformed},
	} {
		err := e.CheckJSON([]byte(c.json), 4)
		if c.err == nil && err != nil || c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.err)
		}
	}
}

func TestExpectProtoForms(t *testing.T) {
	e := NewExpect("m", []TensorMetadata{{Name: "OUT", Datatype: FP32, Shape: []int64{-1, 2}}}, true)
	str := func(b []byte, num protowire.Number, s string) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendString(b, s)
	}
	// Shape first and unpacked, then the name: any order, either encoding.
	var out []byte
	out = protowire.AppendTag(out, 3, protowire.VarintType)
	out = protowire.AppendVarint(out, 4)
	out = protowire.AppendTag(out, 3, protowire.VarintType)
	out = protowire.AppendVarint(out, 2)
	out = str(out, 2, "FP32")
	out = str(out, 1, "OUT")
	msg := str(nil, 3, "id")
	msg = protowire.AppendTag(msg, 5, protowire.BytesType)
	msg = protowire.AppendBytes(msg, out)
	msg = str(msg, 1, "m")
	msg = protowire.AppendTag(msg, 6, protowire.BytesType)
	msg = protowire.AppendBytes(msg, make([]byte, 32))
	if err := e.CheckProto(msg, 4); err != nil {
		t.Errorf("unpacked shape, fields out of order: %v", err)
	}
	if err := e.CheckProto(msg, 3); !errors.Is(err, ErrBadResponse) {
		t.Errorf("batch 3 answered as 4: err %v", err)
	}
	if err := e.CheckProto(msg[:len(msg)-1], 4); !errors.Is(err, ErrMalformed) {
		t.Errorf("cut short: err %v, want ErrMalformed", err)
	}
}

// TestExpectAllocatesNothing: the check of a matching answer is on every
// answer's path, remembered or walked.
func TestExpectAllocatesNothing(t *testing.T) {
	e := NewExpect("m", expectModel, true)
	resp := &InferResponse{Model: "m", Outputs: []Tensor{expectTensor("SCORES", FP32, 3, 4), expectTensor("LABELS", Int64, 3, 7)}}
	checks := encodings(t, resp)
	for form, check := range checks {
		if n := testing.AllocsPerRun(100, func() {
			if err := check(e, 3); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %.0f allocations per check", form, n)
		}
	}
	header, _, pb := encoded(t, resp)
	if n := testing.AllocsPerRun(100, func() {
		if func() error { _, err := walkJSON(&answerCheck{e: e, batch: 3, binLen: -2}, header); return err }() != nil || e.walkProto(pb, 3) != nil {
			t.Fatal("a matching answer fails")
		}
	}); n != 0 {
		t.Errorf("%.0f allocations per walk", n)
	}
}

// TestExpectRemembersByBatch: an answer that passed at one batch size still
// fails at another, and bytes that differ are walked.
func TestExpectRemembersByBatch(t *testing.T) {
	e := NewExpect("m", expectModel, true)
	good := &InferResponse{Model: "m", Outputs: []Tensor{expectTensor("SCORES", FP32, 3, 4), expectTensor("LABELS", Int64, 3, 7)}}
	for form, check := range encodings(t, good) {
		for range 2 {
			if err := check(e, 3); err != nil {
				t.Errorf("%s at batch 3: %v", form, err)
			}
			if err := check(e, 2); !errors.Is(err, ErrBadResponse) {
				t.Errorf("%s at batch 2 after it passed at 3: %v", form, err)
			}
		}
	}
	bad := &InferResponse{Model: "m", Outputs: []Tensor{expectTensor("SCORES", FP32, 3, 4)}}
	for form, check := range encodings(t, bad) {
		if err := check(e, 3); !errors.Is(err, ErrBadResponse) {
			t.Errorf("%s: another answer at batch 3: %v", form, err)
		}
	}
}

func BenchmarkExpect(b *testing.B) {
	e := NewExpect("null", []TensorMetadata{{Name: "OUTPUT0", Datatype: FP32, Shape: []int64{-1, 16}}}, true)
	header, _, pb := encoded(b, &InferResponse{Model: "null", Version: "1", Outputs: []Tensor{expectTensor("OUTPUT0", FP32, 1, 16)}})
	for name, check := range map[string]func() error{
		"json":       func() error { return e.CheckJSON(header, 1) },
		"json-walk":  func() error { _, err := walkJSON(&answerCheck{e: e, batch: 1, binLen: -2}, header); return err },
		"proto":      func() error { return e.CheckProto(pb, 1) },
		"proto-walk": func() error { return e.walkProto(pb, 1) },
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := check(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzExpect: whatever the bytes, a check ends with nil, a malformed answer
// or a mismatch, never a panic or another error.
func FuzzExpect(f *testing.F) {
	e := NewExpect("m", expectModel, true)
	f.Add([]byte(`{"model_name":"m","outputs":[{"name":"SCORES","datatype":"FP32","shape":[2,4]},{"name":"LABELS","datatype":"INT64","shape":[2,1]}]}`), 2)
	f.Add([]byte(`{"model_name":"m","outputs":[{"shape":[2,4],"data":[[1,2],[3]],"name":"SCORES"}]}`), 2)
	f.Add([]byte("\x0a\x01m\x2a\x0f\x0a\x06SCORES\x12\x04FP32\x1a\x00"), 1)
	f.Fuzz(func(t *testing.T, b []byte, batch int) {
		for _, err := range []error{e.CheckJSON(b, batch), e.CheckProto(b, batch)} {
			if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrBadResponse) {
				t.Fatalf("error %v wraps neither ErrMalformed nor ErrBadResponse", err)
			}
		}
	})
}

// TestExpectBinarySizes: CheckAnswer reads each output's binary_data_size
// in the header's walk and checks them against the bytes after the
// header, walked or remembered; a nil Expect checks the sizes alone.
func TestExpectBinarySizes(t *testing.T) {
	e := NewExpect("m", expectModel, true)
	header := func(scores, labels string) []byte {
		return []byte(`{"model_name":"m","outputs":[{"name":"SCORES","datatype":"FP32","shape":[3,4],"parameters":{"binary_data_size":` + scores +
			`}},{"name":"LABELS","datatype":"INT64","shape":[3,7],"parameters":{"binary_data_size":` + labels + `}}]}`)
	}
	cases := []struct {
		name   string
		header []byte
		binLen int64
		want   string // "" passes
	}{
		{"sizes add up", header("48", "168"), 216, ""},
		{"larger than the body", header("1099511627776", "168"), 216, `output "SCORES" binary_data_size 1099511627776 with 216 bytes of binary data left in the body`},
		{"negative", header("-48", "168"), 216, `output "SCORES" binary_data_size -48 is negative`},
		{"second past the rest", header("48", "169"), 216, `output "LABELS" binary_data_size 169 with 168 bytes`},
		{"sum short of the body", header("48", "160"), 216, "add up to 208, the body has 216 bytes after its JSON header"},
		{"not an integer", header("48.0", "168"), 216, `output "SCORES" binary_data_size 48.0 is not an integer`},
		{"in a JSON body", header("48", "168"), -1, "binary_data_size"},
	}
	for _, c := range cases {
		for _, ex := range []*Expect{e, nil} {
			err := ex.CheckAnswer(c.header, 3, c.binLen)
			if c.want == "" && err != nil || c.want != "" && (!errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want)) {
				if ex == nil && c.binLen < 0 && err == nil {
					continue // a nil Expect does not walk a JSON body
				}
				t.Errorf("%s (expect %v): err %v, want %q", c.name, ex != nil, err, c.want)
			}
		}
	}
	// Remembered: the header that passed with 216 bytes after it does not
	// pass with fewer, nor in a JSON body.
	if err := e.CheckAnswer(header("48", "168"), 3, 215); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "add up to 216, the body has 215") {
		t.Errorf("remembered header, short body: %v", err)
	}
	if err := e.CheckAnswer(header("48", "168"), 3, -1); !errors.Is(err, ErrMalformed) {
		t.Errorf("remembered header, JSON body: %v", err)
	}
	h := header("48", "168")
	fresh := NewExpect("m", expectModel, true)
	if n := testing.AllocsPerRun(100, func() {
		_, err := walkJSON(&answerCheck{e: fresh, batch: 3, binLen: 216}, h)
		if err != nil || e.CheckAnswer(h, 3, 216) != nil {
			t.Fatal("a matching answer fails")
		}
	}); n != 0 {
		t.Errorf("%.0f allocations per check, walked and remembered", n)
	}
}

// TestExpectProtoRawContents: a gRPC answer's raw_output_contents, when
// given, are one per output, each as long as its datatype and shape make.
func TestExpectProtoRawContents(t *testing.T) {
	e := NewExpect("m", []TensorMetadata{{Name: "OUT", Datatype: FP32, Shape: []int64{-1, 2}}}, true)
	answer := func(raws ...int) []byte {
		var out []byte
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendString(out, "OUT")
		out = protowire.AppendTag(out, 2, protowire.BytesType)
		out = protowire.AppendString(out, "FP32")
		out = protowire.AppendTag(out, 3, protowire.BytesType)
		out = protowire.AppendBytes(out, protowire.AppendVarint(protowire.AppendVarint(nil, 4), 2))
		msg := protowire.AppendTag(nil, 1, protowire.BytesType)
		msg = protowire.AppendString(msg, "m")
		msg = protowire.AppendTag(msg, 5, protowire.BytesType)
		msg = protowire.AppendBytes(msg, out)
		for _, n := range raws {
			msg = protowire.AppendTag(msg, 6, protowire.BytesType)
			msg = protowire.AppendBytes(msg, make([]byte, n))
		}
		return msg
	}
	cases := []struct {
		name string
		raws []int
		want string
	}{
		{"as the shape makes", []int{32}, ""},
		{"left out (grpcloop skips them)", nil, ""},
		{"short", []int{31}, `output "OUT": raw_output_contents of 31 bytes, its datatype and shape make 32`},
		{"long", []int{1 << 10}, "of 1024 bytes"},
		{"one too many", []int{32, 32}, "2 raw_output_contents for 1 outputs"},
	}
	for _, c := range cases {
		err := e.CheckProto(answer(c.raws...), 4)
		if c.want == "" && err != nil || c.want != "" && (!errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

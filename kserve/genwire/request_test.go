package genwire

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// What AppendRequest writes is the ModelInferRequest protobuf decodes, with
// Triton's conventions: the inputs the model declares, their shape, the
// empty-final parameter for a decoupled model.
func TestAppendRequestDecodes(t *testing.T) {
	long := strings.Repeat("word ", 100) // a length over one varint byte
	tests := []struct {
		name  string
		opts  Options
		req   genai.Request
		text  string
		shape []int64
		want  map[string]string // input name: its contents, as %v of the typed field
	}{
		{name: "defaults", req: genai.Request{Model: "llm", ID: 7, Stream: true, Prompt: &genai.Prompt{Text: "hi", MaxTokens: 16}},
			text: "hi", shape: []int64{1}, want: map[string]string{MaxTokens: "[16]", Stream: "[true]"}},
		{name: "batched, every input, version, long prompt", opts: Options{Batched: true, Inputs: []string{TextInput, MaxTokens, Stream, IgnoreEOS, SamplingParameters}},
			req:  genai.Request{Model: "llm", Version: "2", ID: 1 << 40, Prompt: &genai.Prompt{Text: long, MaxTokens: 300}},
			text: long, shape: []int64{1, 1},
			want: map[string]string{MaxTokens: "[300]", Stream: "[false]", IgnoreEOS: "[true]", SamplingParameters: `{"ignore_eos":true,"max_tokens":300,"min_tokens":300}`}},
		{name: "chat messages, no max_tokens, not decoupled", opts: Options{OneResponse: true, Inputs: []string{TextInput, SamplingParameters}},
			req:  genai.Request{Model: "m", ID: 0, Prompt: &genai.Prompt{Messages: []genai.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"}}}},
			text: "be brief\nhello", shape: []int64{1}, want: map[string]string{SamplingParameters: `{"ignore_eos":true}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := AppendRequest([]byte("prefix"), &tc.opts, &tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), "prefix") {
				t.Fatal("AppendRequest overwrote what b held")
			}
			var m inferencepb.ModelInferRequest
			if err := proto.Unmarshal(b[len("prefix"):], &m); err != nil {
				t.Fatalf("the request does not decode: %v", err)
			}
			if m.ModelName != tc.req.Model || m.ModelVersion != tc.req.Version || m.Id != decimal(tc.req.ID) {
				t.Errorf("model %q version %q id %q, want %q %q %d", m.ModelName, m.ModelVersion, m.Id, tc.req.Model, tc.req.Version, tc.req.ID)
			}
			if final := m.Parameters[EmptyFinal]; final.GetBoolParam() != !tc.opts.OneResponse || (final == nil) != tc.opts.OneResponse {
				t.Errorf("parameters %v: want %s only for a decoupled model", m.Parameters, EmptyFinal)
			}
			got := map[string]string{}
			for _, in := range m.Inputs {
				if !equalShape(in.Shape, tc.shape) {
					t.Errorf("input %s shape %v, want %v", in.Name, in.Shape, tc.shape)
				}
				c := in.GetContents()
				switch {
				case in.Name == TextInput:
					if in.Datatype != "BYTES" || len(c.BytesContents) != 1 || string(c.BytesContents[0]) != tc.text {
						t.Errorf("text_input %v, want BYTES %q", in, tc.text)
					}
					continue
				case in.Datatype == "INT32":
					got[in.Name] = sprint(c.IntContents)
				case in.Datatype == "BOOL":
					got[in.Name] = sprint(c.BoolContents)
				case in.Datatype == "BYTES" && len(c.BytesContents) == 1:
					got[in.Name] = string(c.BytesContents[0])
				default:
					t.Errorf("input %v", in)
				}
			}
			if sprint(got) != sprint(tc.want) {
				t.Errorf("inputs %v, want %v", got, tc.want)
			}
		})
	}
}

func decimal(v uint64) string { return sprint(v) }

func equalShape(a, b []int64) bool { return sprint(a) == sprint(b) }

func TestAppendRequestRefuses(t *testing.T) {
	for _, req := range []genai.Request{{Model: "m"}, {Model: "m", Prompt: &genai.Prompt{Text: "x", MaxTokens: -1}}} {
		if _, err := AppendRequest(nil, &Options{}, &req); !errors.Is(err, kserve.ErrInvalidArgument) {
			t.Errorf("%+v: %v, want an invalid argument", req, err)
		}
	}
}

// Encoding a request into a buffer with room allocates nothing.
func TestAppendRequestNoAllocs(t *testing.T) {
	opts := Options{Inputs: []string{TextInput, MaxTokens, Stream, IgnoreEOS, SamplingParameters}}
	req := genai.Request{Model: "llm", ID: 123456, Stream: true, Prompt: &genai.Prompt{Text: strings.Repeat("a ", 500), MaxTokens: 256}}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { buf, _ = AppendRequest(buf[:0], &opts, &req) }); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
}

func sprint(v any) string { return fmt.Sprint(v) }

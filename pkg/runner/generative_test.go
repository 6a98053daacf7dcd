package runner

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server/servertest"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/target"
	"github.com/netloadgen/netloadgen/pkg/trace"
	"github.com/netloadgen/netloadgen/triton"
)

// llmModel is a KServe backend serving an LLM with Triton's conventions,
// not decoupled (kserve/server answers a stream's request once): inputs
// text_input, max_tokens, stream; outputs text_output and output_ids, as
// many ids as max_tokens asks.
type llmModel struct {
	servertest.Model
	requests atomic.Int64
	bad      atomic.Int64 // requests without Triton's inputs
}

func (*llmModel) ModelMetadata(_ context.Context, model, _ string) (kserve.ModelMetadata, error) {
	if model != "llm" {
		return kserve.ModelMetadata{}, kserve.ErrNotFound
	}
	return kserve.ModelMetadata{Name: "llm", Platform: "test",
		Inputs:  []kserve.TensorMetadata{{Name: "text_input", Datatype: kserve.Bytes, Shape: []int64{1}}, {Name: "max_tokens", Datatype: kserve.Int32, Shape: []int64{1}}, {Name: "stream", Datatype: kserve.Bool, Shape: []int64{1}}},
		Outputs: []kserve.TensorMetadata{{Name: "text_output", Datatype: kserve.Bytes, Shape: []int64{-1}}}}, nil
}

func (*llmModel) ModelReady(_ context.Context, model, _ string) (bool, error) {
	return model == "llm", nil
}

func (*llmModel) ModelConfig(_ context.Context, model, _ string) (triton.ModelConfig, error) {
	if model != "llm" {
		return triton.ModelConfig{}, kserve.ErrNotFound
	}
	return triton.ModelConfig{Name: "llm", Input: []triton.ModelInput{{Name: "text_input", DataType: "TYPE_STRING", Dims: []int64{1}},
		{Name: "max_tokens", DataType: "TYPE_INT32", Dims: []int64{1}}, {Name: "stream", DataType: "TYPE_BOOL", Dims: []int64{1}}}}, nil
}

func (m *llmModel) Infer(_ context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	m.requests.Add(1)
	n := -1
	for _, in := range req.Inputs {
		if in.Name == "max_tokens" && in.Datatype == kserve.Int32 && len(in.Data) == 4 {
			n = int(binary.LittleEndian.Uint32(in.Data))
		}
	}
	if n <= 0 {
		m.bad.Add(1)
		return nil, kserve.Errorf(3, "no max_tokens")
	}
	text := []byte{3, 0, 0, 0, 'a', 'b', 'c'}
	return &kserve.InferResponse{Model: "llm", ID: req.ID, Outputs: []kserve.Tensor{
		{Name: "text_output", Datatype: kserve.Bytes, Shape: []int64{1}, Data: text},
		{Name: "output_ids", Datatype: kserve.Int32, Shape: []int64{1, int64(n)}, Data: make([]byte, 4*n)}}}, nil
}

// A gRPC model whose input is text_input is found generative by the probe
// (no --api), and the run sends every sample as one ModelStreamInfer
// request of Triton's LLM inputs, each answered.
func TestRunDetectsKServeStream(t *testing.T) {
	m := &llmModel{}
	_, grpcAddr, _ := servertest.Serve(t, m)
	spec := Spec{Target: "grpc://" + grpcAddr, Model: "llm", Settings: shortSettings(t, trace.Server), TotalSamples: 16, PerformanceSamples: 16}
	out, err := Run(t.Context(), spec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Probe.API != genai.APIKServeStream {
		t.Errorf("probe found API %q, want %q", out.Probe.API, genai.APIKServeStream)
	}
	res := out.Result
	if res.SamplesFailed != 0 || res.SamplesCompleted == 0 || m.bad.Load() != 0 {
		t.Fatalf("completed %d, failed %d (errors %v), requests without max_tokens %d", res.SamplesCompleted, res.SamplesFailed, res.Errors, m.bad.Load())
	}
	if got := m.requests.Load(); got != res.SamplesIssued {
		t.Errorf("server answered %d requests for %d samples, want one per sample", got, res.SamplesIssued)
	}
}

// The same model asked over HTTP with --api kserve-stream is refused
// before anything is sent, naming the API and the scheme it needs.
func TestCheckAPI(t *testing.T) {
	for _, c := range []struct {
		url string
		api genai.API
		ok  bool
	}{
		{"grpc://h:1", genai.APIKServeStream, true},
		{"http://h:1", genai.APIKServeStream, false},
		{"grpc://h:1", genai.APIOpenAIChat, false},
		{"https://h:1/openai", genai.APIOpenAIChat, true},
		{"grpc://h:1", "", true},
	} {
		tg, err := target.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckAPI(c.api, tg)
		if (err == nil) != c.ok || (err != nil && (!errors.Is(err, ErrAPI) || !strings.Contains(err.Error(), string(c.api)))) {
			t.Errorf("CheckAPI(%s, %s) = %v, want ok %v", c.api, c.url, err, c.ok)
		}
	}
}

// An HTTP target that is no KServe server but lists the model at
// {prefix}/v1/models is an OpenAI chat endpoint; one that does not list
// the model is an error naming it.
func TestProbeFindsOpenAI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/openai/v1/models" || r.Header.Get("Authorization") != "Bearer k" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"object":"list","data":[{"id":"llm","object":"model"}]}`))
	}))
	defer srv.Close()
	hs := []Header{{Name: "Authorization", Value: "Bearer k"}}
	for _, c := range []struct {
		model string
		want  genai.API
	}{{"llm", genai.APIOpenAIChat}, {"other", ""}} {
		tg, _ := target.Parse(srv.URL + "/openai")
		conn, err := connect(t.Context(), tg, 1, true, sent(hs), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := probeRun(t.Context(), conn.probe, tg, Spec{Model: c.model, Headers: hs}, nil)
		conn.probe.Close()
		switch {
		case c.want != "" && (err != nil || pr.API != c.want):
			t.Errorf("model %s: probe %+v, %v: want API %s", c.model, pr, err, c.want)
		case c.want == "" && err == nil:
			t.Errorf("model %s: probe found %+v, want an error", c.model, pr)
		}
	}
}

// detectAPI: over gRPC a decoupled or text_input model streams; over HTTP
// a text_input model of a server with the generate extension; a tensor
// model is a tensor model either way.
func TestDetectAPI(t *testing.T) {
	text := kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{{Name: "text_input"}}}
	tensor := kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{{Name: "INPUT0"}}}
	decoupled := &triton.ModelConfig{ModelTransactionPolicy: &triton.ModelTransactionPolicy{Decoupled: true}}
	gen := kserve.ServerMetadata{Extensions: []string{"generate"}}
	g, _ := target.Parse("grpc://h:1")
	h, _ := target.Parse("http://h:1")
	for _, c := range []struct {
		name string
		pr   Probe
		t    target.Target
		want genai.API
	}{
		{"grpc text_input", Probe{Model: text}, g, genai.APIKServeStream},
		{"grpc decoupled", Probe{Model: tensor, Config: decoupled}, g, genai.APIKServeStream},
		{"grpc tensor", Probe{Model: tensor}, g, ""},
		{"http text_input generate", Probe{Model: text, Server: gen}, h, genai.APIGenerateStream},
		{"http text_input no generate", Probe{Model: text}, h, ""},
		{"http tensor generate", Probe{Model: tensor, Server: gen}, h, ""},
	} {
		if got := detectAPI(&c.pr, c.t); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

package sutproxy_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// fastLLM answers in about a millisecond per token.
const fastLLM = "name=chat,kind=llm,max_seqs=8,step=1ms,per_seq=10us,prefill=1us"

// post sends a JSON body and returns the response (body read by the caller).
func post(t *testing.T, url string, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvents reads a whole SSE body: each event's data, in order; a
// trailing event without its blank line is returned with ok false.
func sseEvents(t *testing.T, r io.Reader) (events []string, ok bool, err error) {
	t.Helper()
	sc := bufio.NewScanner(r)
	var cur []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if cur != nil {
				events = append(events, strings.Join(cur, "\n"))
			}
			cur = nil
			continue
		}
		data, found := strings.CutPrefix(line, "data: ")
		if !found {
			t.Fatalf("line %q is not a data line", line)
		}
		cur = append(cur, data)
	}
	return events, cur == nil, sc.Err()
}

// TestOpenAIChatStream: a streamed chat answer is vLLM's: a role chunk,
// one chunk per token with the last one's finish_reason, the usage chunk
// asked for by stream_options, then [DONE]; sutproxy records each token
// under the X-Request-Id.
func TestOpenAIChatStream(t *testing.T) {
	p, rec := sutproxytest.StartRecording(t, fastLLM)
	resp := post(t, "http://"+p.HTTPAddr()+"/openai/v1/chat/completions",
		`{"model":"chat","messages":[{"role":"user","content":"one two three"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`,
		"X-Request-Id", "r-17")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events, complete, err := sseEvents(t, resp.Body)
	if err != nil || !complete {
		t.Fatalf("events %q: complete %v, %v", events, complete, err)
	}
	if len(events) != 8 || events[7] != "[DONE]" {
		t.Fatalf("%d events %q: want role, 5 tokens, usage, [DONE]", len(events), events)
	}
	type chunk struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Choices []struct {
			Delta        struct{ Role, Content string } `json:"delta"`
			FinishReason *string                        `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	var text string
	for i, ev := range events[:7] {
		var c chunk
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatalf("event %d %q: %v", i, ev, err)
		}
		switch {
		case i == 0:
			if c.Choices[0].Delta.Role != "assistant" || c.Choices[0].Delta.Content != "" {
				t.Errorf("first chunk %q: want the role and no text", ev)
			}
		case i == 6:
			if len(c.Choices) != 0 || c.Usage == nil || c.Usage.Prompt != 3 || c.Usage.Completion != 5 {
				t.Errorf("usage chunk %q: want 3 prompt and 5 completion tokens", ev)
			}
		default:
			text += c.Choices[0].Delta.Content
			last := i == 5
			if (c.Choices[0].FinishReason != nil) != last || (last && *c.Choices[0].FinishReason != "length") {
				t.Errorf("chunk %d %q: finish_reason only on the last, length", i, ev)
			}
		}
		if c.ID != "chatcmpl-r-17" || c.Object != "chat.completion.chunk" {
			t.Errorf("chunk %q: id %q object %q", ev, c.ID, c.Object)
		}
	}
	if text != "the model answers one word" {
		t.Errorf("text %q", text)
	}
	got := rec.ByID()["r-17"]
	if len(got) != 5 || got[0].Index != 0 || !got[4].Last || got[0].Model != "chat" {
		t.Errorf("emissions %+v: want the 5 tokens of r-17", got)
	}
}

// TestOpenAIWholeAnswers: non-streamed completions and chat answers carry
// the text and usage; /v1/models lists the generative models only.
func TestOpenAIWholeAnswers(t *testing.T) {
	p := sutproxytest.Start(t, fastLLM, "name=tensor,fn=echo")
	base := "http://" + p.HTTPAddr()
	var c struct {
		Object  string
		Choices []struct {
			Text         string
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
			Total      int `json:"total_tokens"`
		}
	}
	resp := post(t, base+"/v1/completions", `{"model":"chat","prompt":"a b","max_tokens":3}`)
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != 200 {
		t.Fatalf("completions: %d %v", resp.StatusCode, err)
	}
	if c.Object != "text_completion" || c.Choices[0].Text != "the model answers" || c.Choices[0].FinishReason != "length" ||
		c.Usage.Prompt != 2 || c.Usage.Completion != 3 || c.Usage.Total != 5 {
		t.Errorf("completions answer %+v", c)
	}
	resp = post(t, base+"/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":[{"type":"text","text":"x y z"}]}],"max_completion_tokens":2}`)
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != 200 {
		t.Fatalf("chat: %d %v", resp.StatusCode, err)
	}
	if c.Object != "chat.completion" || c.Choices[0].Message.Content != "the model" || c.Choices[0].Message.Role != "assistant" || c.Usage.Prompt != 3 {
		t.Errorf("chat answer %+v", c)
	}
	mresp, err := http.Get(base + "/openai/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer mresp.Body.Close()
	var models struct{ Data []struct{ ID string } }
	if err := json.NewDecoder(mresp.Body).Decode(&models); err != nil || len(models.Data) != 1 || models.Data[0].ID != "chat" {
		t.Errorf("models %+v %v: want chat only", models, err)
	}
}

// TestOpenAIErrors: an unknown model is a 404 and a bad request a 400, in
// OpenAI's error shape.
func TestOpenAIErrors(t *testing.T) {
	p := sutproxytest.Start(t, fastLLM+",max_tokens_limit=100", "name=tensor,fn=echo")
	base := "http://" + p.HTTPAddr()
	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/chat/completions", `{"model":"nope","messages":[{"role":"user","content":"x"}]}`, 404, "nope"},
		{"/v1/chat/completions", `{"model":"tensor","messages":[{"role":"user","content":"x"}]}`, 400, "not generative"},
		{"/v1/completions", `{"model":"chat","prompt":"x","max_tokens":101}`, 400, "max_tokens"},
		{"/v1/chat/completions", `{"model":"chat","messages":[]}`, 400, "messages"},
		{"/v1/completions", `{"model":"chat"`, 400, "request body"},
	} {
		resp := post(t, base+tc.path, tc.body)
		var e struct {
			Error struct {
				Message string
				Code    int
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != tc.status ||
			e.Error.Code != tc.status || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s %s: %d %+v %v; want %d naming %q", tc.path, tc.body, resp.StatusCode, e, err, tc.status, tc.want)
		}
	}
}

// TestTritonGenerate: the generate extension answers the whole text and
// output_ids; generate_stream one event per token; server metadata lists
// the extension.
func TestTritonGenerate(t *testing.T) {
	p, rec := sutproxytest.StartRecording(t, fastLLM)
	base := "http://" + p.HTTPAddr() + "/v2/models/chat"
	resp := post(t, base+"/generate", `{"id":"g1","text_input":"hello there","parameters":{"max_tokens":4}}`)
	var whole struct {
		ID         string `json:"id"`
		ModelName  string `json:"model_name"`
		TextOutput string `json:"text_output"`
		OutputIDs  []int  `json:"output_ids"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&whole); err != nil || resp.StatusCode != 200 {
		t.Fatalf("generate: %d %v", resp.StatusCode, err)
	}
	if whole.ID != "g1" || whole.ModelName != "chat" || whole.TextOutput != "the model answers one" || len(whole.OutputIDs) != 4 {
		t.Errorf("generate answer %+v", whole)
	}
	resp = post(t, base+"/generate_stream", `{"id":"g2","text_input":"hello","max_tokens":3,"ignore_eos":true}`)
	events, complete, err := sseEvents(t, resp.Body)
	if err != nil || !complete || len(events) != 3 {
		t.Fatalf("generate_stream events %q complete %v %v: want 3", events, complete, err)
	}
	var ev struct {
		TextOutput string `json:"text_output"`
		OutputIDs  []int  `json:"output_ids"`
	}
	if err := json.Unmarshal([]byte(events[2]), &ev); err != nil || ev.TextOutput != " answers" || len(ev.OutputIDs) != 1 {
		t.Errorf("third event %q: %v", events[2], err)
	}
	if n := len(rec.ByID()["g2"]); n != 3 {
		t.Errorf("%d emissions of g2, want 3", n)
	}
	mresp, err := http.Get("http://" + p.HTTPAddr() + "/v2")
	if err != nil {
		t.Fatal(err)
	}
	defer mresp.Body.Close()
	var md kserve.ServerMetadata
	if err := json.NewDecoder(mresp.Body).Decode(&md); err != nil || !slices.Contains(md.Extensions, "generate") {
		t.Errorf("server metadata %+v %v: want the generate extension", md, err)
	}
}

// streamClient opens ModelStreamInfer on p.
func streamClient(t *testing.T, p *sutproxy.Proxy) inferencepb.GRPCInferenceService_ModelStreamInferClient {
	t.Helper()
	conn, err := grpc.NewClient(p.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	st, err := inferencepb.NewGRPCInferenceServiceClient(conn).ModelStreamInfer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// llmRequest is a Triton LLM request for the stream.
func llmRequest(model, id, text string, maxTokens int32, stream bool) *inferencepb.ModelInferRequest {
	b := func(v bool) []byte {
		if v {
			return []byte{1}
		}
		return []byte{0}
	}
	textRaw := binary.LittleEndian.AppendUint32(nil, uint32(len(text)))
	return &inferencepb.ModelInferRequest{
		ModelName: model, Id: id,
		Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
			{Name: "text_input", Datatype: "BYTES", Shape: []int64{1}},
			{Name: "max_tokens", Datatype: "INT32", Shape: []int64{1}},
			{Name: "stream", Datatype: "BOOL", Shape: []int64{1}},
			{Name: "ignore_eos", Datatype: "BOOL", Shape: []int64{1}},
		},
		RawInputContents: [][]byte{append(textRaw, text...), binary.LittleEndian.AppendUint32(nil, uint32(maxTokens)), b(stream), b(true)},
	}
}

// final is a response's triton_final_response.
func final(r *inferencepb.ModelInferResponse) bool {
	return r.GetParameters()["triton_final_response"].GetBoolParam()
}

// TestModelStreamInferDecoupled: two requests multiplexed on one stream,
// one streamed (a response per token, the last final) and one not (one
// final response with every token); the model's config says decoupled.
func TestModelStreamInferDecoupled(t *testing.T) {
	p, rec := sutproxytest.StartRecording(t, fastLLM)
	st := streamClient(t, p)
	if err := st.Send(llmRequest("chat", "s1", "a b c", 4, true)); err != nil {
		t.Fatal(err)
	}
	if err := st.Send(llmRequest("chat", "w1", "a", 3, false)); err != nil {
		t.Fatal(err)
	}
	var tokens []string
	wholeSeen := false
	for !wholeSeen || len(tokens) < 4 {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		r := m.GetInferResponse()
		if m.GetErrorMessage() != "" || len(r.GetRawOutputContents()) != 2 || r.GetOutputs()[0].GetName() != "text_output" {
			t.Fatalf("response %v", m)
		}
		text := string(r.GetRawOutputContents()[0][4:])
		ids := len(r.GetRawOutputContents()[1]) / 4
		switch r.GetId() {
		case "s1":
			tokens = append(tokens, text)
			if ids != 1 || final(r) != (len(tokens) == 4) {
				t.Errorf("token %d of s1: %d ids, final %v", len(tokens), ids, final(r))
			}
		case "w1":
			wholeSeen = true
			if text != "the model answers" || ids != 3 || !final(r) {
				t.Errorf("whole answer %q, %d ids, final %v", text, ids, final(r))
			}
		default:
			t.Fatalf("response for unknown id %q", r.GetId())
		}
	}
	if strings.Join(tokens, "") != "the model answers one" {
		t.Errorf("streamed text %q", tokens)
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); !errors.Is(err, io.EOF) {
		t.Errorf("after the answers: %v, want EOF", err)
	}
	if n := len(rec.ByID()["s1"]); n != 4 {
		t.Errorf("%d emissions of s1, want 4", n)
	}
	cfg := sutproxyConfig(t, p, "chat")
	if !bytes.Contains(cfg, []byte(`"decoupled":true`)) {
		t.Errorf("config %s: want decoupled", cfg)
	}
}

func sutproxyConfig(t *testing.T, p *sutproxy.Proxy, model string) []byte {
	t.Helper()
	resp, err := http.Get("http://" + p.HTTPAddr() + "/v2/models/" + model + "/config")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

// TestModelStreamInferGenerativeErrors: a bad generative request is
// answered on the stream with error_message and its id, and the stream
// goes on.
func TestModelStreamInferGenerativeErrors(t *testing.T) {
	p := sutproxytest.Start(t, fastLLM+",max_tokens_limit=10")
	st := streamClient(t, p)
	noText := llmRequest("chat", "e1", "x", 4, true)
	noText.Inputs, noText.RawInputContents = noText.Inputs[1:], noText.RawInputContents[1:]
	for _, m := range []*inferencepb.ModelInferRequest{llmRequest("chat", "e0", "x", 11, true), noText, llmRequest("chat", "ok", "x", 1, true)} {
		if err := st.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"e0": "max_tokens", "e1": "text_input", "ok": ""}
	for range 3 {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		id := m.GetInferResponse().GetId()
		w, known := want[id]
		if !known || !strings.Contains(m.GetErrorMessage(), w) || (w == "") != (m.GetErrorMessage() == "") {
			t.Errorf("response for %q: error %q, want one naming %q", id, m.GetErrorMessage(), w)
		}
		delete(want, id)
	}
}

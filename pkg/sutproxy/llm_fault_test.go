package sutproxy_test

import (
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"errors"
	"io"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"

	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// faultModels are one LLM model per test fault.
func faultModels(t *testing.T) (base string, grpcAddr string) {
	t.Helper()
	var flags []string
	for _, f := range []string{"bad_framing", "error_mid", "no_final", "unknown_id"} {
		flags = append(flags, "name="+f+",kind=llm,step=1ms,fault="+f)
	}
	p := sutproxytest.Start(t, flags...)
	return "http://" + p.HTTPAddr(), p.GRPCAddr()
}

// TestSSEFaults: each test fault breaks an SSE answer after its first
// token the way it says, so that clients can be tested against it.
func TestSSEFaults(t *testing.T) {
	base, _ := faultModels(t)
	chat := func(model string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"x"}],"max_tokens":4,"stream":true}`
	}
	// bad_framing: an event cut off by the body's end.
	events, complete, err := sseEvents(t, post(t, base+"/v1/chat/completions", chat("bad_framing")).Body)
	if err != nil || complete || len(events) != 2 {
		t.Errorf("bad_framing: events %q complete %v err %v: want role, one token, then a cut-off event", events, complete, err)
	}
	// error_mid: an error event after the first token, no [DONE].
	events, complete, err = sseEvents(t, post(t, base+"/v1/chat/completions", chat("error_mid")).Body)
	if err != nil || !complete || len(events) != 3 || !strings.Contains(events[2], `"error"`) {
		t.Errorf("error_mid: events %q complete %v err %v: want role, one token, an error event", events, complete, err)
	}
	// no_final over OpenAI: the body ends without [DONE].
	events, complete, err = sseEvents(t, post(t, base+"/v1/chat/completions", chat("no_final")).Body)
	if err != nil || !complete || len(events) != 2 || events[len(events)-1] == "[DONE]" {
		t.Errorf("no_final: events %q complete %v err %v: want role and one token, no [DONE]", events, complete, err)
	}
	// no_final over generate_stream: the connection is cut mid-body.
	resp := post(t, base+"/v2/models/no_final/generate_stream", `{"text_input":"x","max_tokens":4}`)
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("generate_stream no_final: body read %v, want an unexpected EOF", err)
	}
	// unknown_id does not apply over HTTP: the answer is whole.
	events, complete, err = sseEvents(t, post(t, base+"/v1/chat/completions", chat("unknown_id")).Body)
	if err != nil || !complete || len(events) != 6 || events[5] != "[DONE]" {
		t.Errorf("unknown_id over HTTP: events %q complete %v err %v: want a whole answer", events, complete, err)
	}
}

// TestWholeAnswerFaults: non-streamed answers break too: truncated JSON, a
// 500, a connection closed without an answer.
func TestWholeAnswerFaults(t *testing.T) {
	base, _ := faultModels(t)
	body := func(model string) string { return `{"model":"` + model + `","prompt":"x","max_tokens":4}` }
	resp := post(t, base+"/v1/completions", body("bad_framing"))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || len(b) == 0 || b[len(b)-1] == '}' {
		t.Errorf("bad_framing: %d %q: want a cut JSON body", resp.StatusCode, b)
	}
	resp = post(t, base+"/v1/completions", body("error_mid"))
	if resp.StatusCode != 500 {
		t.Errorf("error_mid: status %d, want 500", resp.StatusCode)
	}
	req := strings.NewReader(body("no_final"))
	r, err := httpPost(t, base+"/v1/completions", req)
	if err == nil {
		r.Body.Close()
		t.Errorf("no_final: got status %d, want the connection closed without an answer", r.StatusCode)
	}
}

// TestStreamFaults: over ModelStreamInfer, after the first token: a
// response without text_output, an error response, the stream ended
// without a final response, responses for an id never sent.
func TestStreamFaults(t *testing.T) {
	_, addr := faultModels(t)
	p := struct{ addr string }{addr}
	first := func(model string) (*streamResult, error) { return runStream(t, p.addr, model) }

	r, err := first("bad_framing")
	if err != nil || len(r.responses) != 2 || len(r.responses[1].GetInferResponse().GetOutputs()) != 0 {
		t.Errorf("bad_framing: %+v %v: want a token, then a response without text_output", r, err)
	}
	r, err = first("error_mid")
	if err != nil || len(r.responses) != 2 || r.responses[1].GetErrorMessage() == "" || r.responses[1].GetInferResponse().GetId() != "q" {
		t.Errorf("error_mid: %+v %v: want a token, then an error response for q", r, err)
	}
	r, err = first("no_final")
	if !errors.Is(err, io.EOF) || len(r.responses) != 1 || final(r.responses[0].GetInferResponse()) {
		t.Errorf("no_final: %+v %v: want one non-final token, then the stream's end", r, err)
	}
	r, err = first("unknown_id")
	if err != nil || len(r.responses) != 4 || r.responses[1].GetInferResponse().GetId() != "sutproxy-unknown-q" {
		t.Errorf("unknown_id: %+v %v: want q's first token, then tokens for another id", r, err)
	}
}

// streamResult is what one request on a fresh stream got.
type streamResult struct {
	responses []*inferencepb.ModelStreamInferResponse
}

// runStream sends one streamed request of 4 tokens with id q and reads
// until a final response, an error response after the first, a response
// without outputs, 4 responses, or the stream's end (its error returned).
func runStream(t *testing.T, addr, model string) (*streamResult, error) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := inferencepb.NewGRPCInferenceServiceClient(conn).ModelStreamInfer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(llmRequest(model, "q", "x", 4, true)); err != nil {
		t.Fatal(err)
	}
	r := &streamResult{}
	for len(r.responses) < 4 {
		m, err := st.Recv()
		if err != nil {
			return r, err
		}
		r.responses = append(r.responses, m)
		ir := m.GetInferResponse()
		if final(ir) || m.GetErrorMessage() != "" || len(ir.GetOutputs()) == 0 {
			break
		}
	}
	return r, nil
}

func httpPost(t *testing.T, url string, body io.Reader) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, body)
	if err != nil {
		t.Fatal(err)
	}
	return http.DefaultClient.Do(req)
}

// openStream opens ModelStreamInfer on addr.
func openStream(tb testing.TB, addr string) (*grpc.ClientConn, inferencepb.GRPCInferenceService_ModelStreamInferClient) {
	tb.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	st, err := inferencepb.NewGRPCInferenceServiceClient(conn).ModelStreamInfer(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	return conn, st
}

// TestNoStreamOptions: a model like a server that does not know
// stream_options refuses a request carrying it with a 400 naming it, and
// answers the same request without it.
func TestNoStreamOptions(t *testing.T) {
	p := sutproxytest.Start(t, "name=old,kind=llm,step=1ms,fault=no_stream_options")
	url := "http://" + p.HTTPAddr() + "/v1/completions"
	resp := post(t, url, `{"model":"old","prompt":"x","max_tokens":2,"stream":true,"stream_options":{"include_usage":true}}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "stream_options") {
		t.Errorf("with stream_options: %d %s: want 400 naming stream_options", resp.StatusCode, b)
	}
	events, complete, err := sseEvents(t, post(t, url, `{"model":"old","prompt":"x","max_tokens":2,"stream":true}`).Body)
	if err != nil || !complete || len(events) != 3 {
		t.Errorf("without: events %q complete %v %v: want 2 tokens and [DONE]", events, complete, err)
	}
}

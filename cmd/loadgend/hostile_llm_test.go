package main

// Issue 26's hostile generative servers, through the CLI: an OpenAI-
// compatible endpoint on a raw listener that lists its model and then
// answers each request with the bytes a test writes, as they are.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// hostileModel is the model the hostile endpoint lists.
const hostileModel = "m"

// hostileLLM serves GET /v1/models (hostileModel) and answers every other
// request with answer, which writes the answer's bytes on the connection;
// the connection closes when answer returns false. It returns the target.
func hostileLLM(t *testing.T, answer func(w io.Writer) bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go hostileConn(conn, answer)
		}
	}()
	return "http://" + ln.Addr().String()
}

func hostileConn(conn net.Conn, answer func(w io.Writer) bool) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		if req.Method == http.MethodGet {
			list := `{"object":"list","data":[{"id":"` + hostileModel + `","object":"model"}]}`
			fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(list), list)
			continue
		}
		if !answer(conn) {
			return
		}
	}
}

// sseChunk frames s as one HTTP chunk.
func sseChunk(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }

const (
	sseHead200  = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	sseDelta    = "data: {\"choices\":[{\"delta\":{\"content\":\" a\"}}]}\n\n"
	sseDone     = "data: [DONE]\n\n"
	sseLastZero = "0\r\n\r\n"
)

// hostileRun runs `loadgend run` of llmSingleStream (16 queries) against
// target with --api openai-chat, llmInput and llmOutput tokens; it returns
// the invocation, the result and the run's directory and samples file.
func hostileRun(t *testing.T, target string, args ...string) (invocation, *loadgen.Result, string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out")
	samples := filepath.Join(t.TempDir(), "samples.jsonl")
	all := []string{"--target", target, "--model", hostileModel, "--api", "openai-chat", "--out", dir, "--samples-out", samples,
		"--input-tokens", strconv.Itoa(llmInput), "--output-tokens", strconv.Itoa(llmOutput), "--drain-timeout-ms", "2000"}
	all = append(append(all, llmSingleStream...), args...)
	inv := runArgs(all...)
	res := completedRun(t, inv, dir)
	return inv, res, dir, samples
}

// TestRunLLMNoOutputTokens (issue 26 item 5): a streaming endpoint that
// answers 200 text/event-stream and closes, or streams only empty deltas
// and [DONE], fails every sample (malformed, "no output tokens"): the run
// is INVALID with a non-zero exit, and the summary never pairs ERRORS
// with VALID, with --use-token-latencies too.
func TestRunLLMNoOutputTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	shapes := map[string]func(w io.Writer) bool{
		"head then close": func(w io.Writer) bool {
			io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
			return false
		},
		"empty deltas then [DONE]": func(w io.Writer) bool {
			io.WriteString(w, sseHead200+sseChunk("data: {\"choices\":[{\"delta\":{}}]}\n\n")+sseChunk("data: {\"choices\":[{\"delta\":{}}]}\n\n")+
				sseChunk(sseDone)+sseLastZero)
			return true
		},
	}
	for name, answer := range shapes {
		for _, tl := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/token latencies %v", name, tl), func(t *testing.T) {
				var args []string
				if tl {
					args = []string{"--use-token-latencies", "--ttft-latency-ms", "2000", "--tpot-latency-ms", "200"}
				}
				inv, res, dir, _ := hostileRun(t, hostileLLM(t, answer), args...)
				if inv.code != exitInvalid || res.Valid || res.SamplesFailed == 0 || res.SamplesFailed != res.SamplesIssued {
					t.Fatalf("exit %d, %s, %d of %d samples failed: want every sample failed, INVALID, exit %d", inv.code, res.Validity,
						res.SamplesFailed, res.SamplesIssued, exitInvalid)
				}
				if len(res.Failures) != 1 || res.Failures[0].Outcome != "malformed" || !strings.Contains(res.Failures[0].Example, "no output tokens") {
					t.Errorf("failures %+v: want one kind, malformed, saying \"no output tokens\"", res.Failures)
				}
				summary, err := os.ReadFile(filepath.Join(dir, runlog.SummaryFile))
				if err != nil {
					t.Fatal(err)
				}
				if regexp.MustCompile(`ERRORS encountered`).Match(summary) && regexp.MustCompile(`(?m)^Result is : VALID$`).Match(summary) {
					t.Errorf("the summary pairs ERRORS encountered with VALID:\n%s", summary)
				}
			})
		}
	}
}

// TestRunLLMServerClaims (issue 26 item 7): a server's token counts are
// checked against what it streamed. usage.completion_tokens = 1000 for
// max_tokens 8 and 100,000 output_ids are set aside for the responses
// counted, with one warning; a sample whose tokens all came in one read
// (the end a moment later) is left out of the per-user rate, with a
// warning, instead of making it about 1/ns.
func TestRunLLMServerClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	deltas := strings.Repeat(sseChunk(sseDelta), llmOutput)
	ids := strings.TrimSuffix(strings.Repeat("7,", 100000), ",")
	t.Run("usage over max_tokens", func(t *testing.T) {
		target := hostileLLM(t, func(w io.Writer) bool {
			io.WriteString(w, sseHead200+deltas+sseChunk(`data: {"choices":[],"usage":{"prompt_tokens":16,"completion_tokens":1000}}`+"\n\n")+
				sseChunk(sseDone)+sseLastZero)
			return true
		})
		_, res, _, _ := hostileRun(t, target)
		checkClaimsSetAside(t, res, 1000)
	})
	t.Run("100,000 output_ids", func(t *testing.T) {
		target := hostileLLM(t, func(w io.Writer) bool {
			io.WriteString(w, sseHead200+strings.Repeat(sseChunk(sseDelta), llmOutput-1)+
				sseChunk(`data: {"choices":[{"delta":{"content":" a"}}],"output_ids":[`+ids+"]}\n\n")+sseChunk(sseDone)+sseLastZero)
			return true
		})
		_, res, _, _ := hostileRun(t, target)
		checkClaimsSetAside(t, res, 100000) // the ids summed: the deltas before carried none
	})
	t.Run("every token in one read", func(t *testing.T) {
		target := hostileLLM(t, func(w io.Writer) bool {
			io.WriteString(w, sseHead200+sseChunk(strings.Repeat(sseDelta, llmOutput)))
			// The end comes apart from the tokens: what made E2E − TTFT a
			// few µs and the per-user rate about 1e8 tokens/s.
			time.Sleep(20 * time.Millisecond)
			io.WriteString(w, sseChunk(sseDone)+sseLastZero)
			return true
		})
		_, res, _, _ := hostileRun(t, target)
		tk := res.Tokens
		if tk == nil || tk.OutputTokens != res.SamplesIssued*llmOutput {
			t.Fatalf("tokens %+v: want %d output tokens", tk, res.SamplesIssued*llmOutput)
		}
		if tk.OutputTokensPerSecondPerUser != 0 {
			t.Errorf("output_tokens_per_second_per_user %v: want the samples left out (0)", tk.OutputTokensPerSecondPerUser)
		}
		want := fmt.Sprintf("%d samples' tokens all arrived in one read", res.SamplesIssued)
		if !hasWarning(res, want) {
			t.Errorf("warnings %q: want one saying %q", res.Warnings, want)
		}
	})
}

// checkClaimsSetAside: every sample completed with its llmOutput streamed
// tokens counted, and one warning names the samples and claimed tokens.
func checkClaimsSetAside(t *testing.T, res *loadgen.Result, claimedEach int64) {
	t.Helper()
	tk := res.Tokens
	n := res.SamplesIssued
	if res.SamplesFailed != 0 || tk == nil || tk.OutputTokens != n*llmOutput || tk.TokenCountSource != loadgen.TokensFromResponses {
		t.Fatalf("%d failed, tokens %+v: want %d output tokens counted from the responses", res.SamplesFailed, tk, n*llmOutput)
	}
	want := fmt.Sprintf("not believed for %d samples: it claimed %d tokens where %d token-bearing responses came", n, n*claimedEach, n*llmOutput)
	if !hasWarning(res, want) {
		t.Errorf("warnings %q: want one saying %q", res.Warnings, want)
	}
}

func hasWarning(res *loadgen.Result, s string) bool {
	for _, w := range res.Warnings {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// TestRunLLMFailedSampleKeepsTokens (issue 26 item 11): a stream that sends
// 3 tokens and then breaks its framing fails its sample, and the sample's
// samples.jsonl line keeps what was measured: its first token, 3 tokens,
// its prompt's input tokens. result.json's token statistics leave failed
// samples out (LoadGen's rule).
func TestRunLLMFailedSampleKeepsTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	target := hostileLLM(t, func(w io.Writer) bool {
		io.WriteString(w, sseHead200+strings.Repeat(sseChunk(sseDelta), 3)+"zz\r\n")
		return false
	})
	_, res, _, samples := hostileRun(t, target)
	if res.SamplesFailed != res.SamplesIssued || res.SamplesIssued == 0 {
		t.Fatalf("%d of %d samples failed: want all", res.SamplesFailed, res.SamplesIssued)
	}
	if res.Tokens != nil && res.Tokens.Samples != 0 {
		t.Errorf("tokens %+v: failed samples entered the token statistics", res.Tokens)
	}
	lines := readSamples(t, samples)
	if int64(len(lines)) != res.SamplesIssued {
		t.Fatalf("%d samples lines, %d samples", len(lines), res.SamplesIssued)
	}
	for i, l := range lines {
		if l.Status != "malformed" || l.FirstToken == nil || *l.FirstToken < l.Scheduled || l.Tokens != 3 || l.Input != llmInput || l.LastToken != nil {
			t.Fatalf("samples line %d: %+v: want malformed, a first token, 3 tokens, %d input tokens, no last token", i, l, llmInput)
		}
	}
}

// TestRunLLMStillStreamingAtDrain (issue 26 item 12): an answer that keeps
// sending tokens past the drain timeout is "still streaming at the drain
// timeout", not a SUT that sent no response.
func TestRunLLMStillStreamingAtDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	target := hostileLLM(t, func(w io.Writer) bool {
		if _, err := io.WriteString(w, sseHead200); err != nil {
			return false
		}
		// A token every 20 ms until the client goes (its write fails).
		for {
			if _, err := io.WriteString(w, sseChunk(sseDelta)); err != nil {
				return false
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	_, res, _, _ := hostileRun(t, target, "--drain-timeout-ms", "500")
	if res.Valid || res.Unanswered == 0 {
		t.Fatalf("%s, %d unanswered (end %q, failures %+v, errors %q): want the streaming samples unanswered",
			res.Validity, res.Unanswered, res.EndMessage, res.Failures, res.Errors)
	}
	msgs := append([]string{res.EndMessage}, res.Errors...)
	for _, f := range res.Failures {
		msgs = append(msgs, f.Example)
	}
	joined := strings.Join(msgs, "\n")
	if !strings.Contains(joined, "still streaming at the drain timeout") || strings.Contains(joined, "sent no response") {
		t.Errorf("end message and errors %q: want \"still streaming at the drain timeout\", never \"sent no response\"", msgs)
	}
	if !strings.Contains(res.EndMessage, "still streaming") {
		t.Errorf("end message %q: want it to say the SUT was still streaming", res.EndMessage)
	}
}

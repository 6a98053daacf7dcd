package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// failedNs is how LoadGen's convention for a failed sample's latency
// (INT64_MAX ns) reads in any unit: 9223372036854775807 ns,
// 9223372036854.775 ms, 9223372036.854 s all start so.
const failedNs = "9223372036854"

// Every tenth inference request of the hostile server is answered with
// these exact bytes; the others with okAnswer.
const (
	failAnswer = "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"error\":\"boom\"}"
	okBody     = `{"model_name":"m","outputs":[{"name":"out","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]}`
	metaBody   = `{"name":"m","versions":["1"],"platform":"raw","inputs":[{"name":"in","datatype":"FP32","shape":[-1,4]}],"outputs":[{"name":"out","datatype":"FP32","shape":[-1,4]}]}`
	serverBody = `{"name":"raw","version":"1","extensions":[]}`
)

func rawAnswer(status, body string) string {
	return fmt.Sprintf("HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", status, len(body), body)
}

// everyTenthFails is a KServe v2 server over HTTP/1.1 on a raw
// net.Listener: health and metadata answer as a server of model "m" with
// one FP32 [-1,4] input does, and of the inference requests (counted over
// every connection) each tenth gets HTTP 500, the others an answer, from
// the fromProbe-th probe on (GET /v2/health/live, once a run or trial:
// 1 fails from the start, 2 lets a search's first trial pass). It returns
// its address.
func everyTenthFails(t *testing.T, fromProbe int64) string {
	t.Helper()
	var infers, probes atomic.Int64
	addr, _ := testtool.RawHTTP(t, func(line string) string {
		switch p := testtool.RequestPath(line); {
		case strings.HasSuffix(p, "/infer"):
			if probes.Load() >= fromProbe && infers.Add(1)%10 == 0 {
				return failAnswer
			}
			return rawAnswer("200 OK", okBody)
		case p == "/v2/health/live":
			probes.Add(1)
			return rawAnswer("200 OK", "")
		case p == "/v2/health/ready" || p == "/v2/models/m/ready":
			return rawAnswer("200 OK", "")
		case p == "/v2":
			return rawAnswer("200 OK", serverBody)
		case p == "/v2/models/m":
			return rawAnswer("200 OK", metaBody)
		}
		return rawAnswer("404 Not Found", `{"error":"not found"}`)
	})
	return addr
}

// answeredP99 matches "p99 12.3 ms" or "p99 850 µs" and the like: a
// latency, not "failed".
var answeredP99 = regexp.MustCompile(`p99 [0-9.]+ ?(ns|µs|ms|s)\b`)

// TestRunWithFailedSamplesShowsAnsweredPercentiles: a run against a server
// that answers every tenth request with HTTP 500 (issue 26 #13). What a
// person reads (stdout's verdict line and --latency spectrum, the
// summary's "In readable units:" block, latency_spectrum.txt, the time
// series) shows the percentiles over the answered samples with "N failed"
// beside them, never LoadGen's INT64_MAX; result.json keeps LoadGen's
// sample_latency and adds sample_latency_answered; the summary's LoadGen
// lines keep LoadGen's convention.
func TestRunWithFailedSamplesShowsAnsweredPercentiles(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	addr := everyTenthFails(t, 1)
	for _, client := range []string{"loop", "pool"} {
		t.Run(client, func(t *testing.T) {
			dir := t.TempDir()
			inv := runArgs("--target", "http://"+addr, "--model", "m", "--http-client", client, "--scenario", "Server",
				"--target-qps", "200", "--target-latency-ms", "50", "--min-duration-ms", "300", "--min-query-count", "60",
				"--no-early-verdict", "--latency", "--out", dir)
			res := completedRun(t, inv, dir)
			if res.SamplesFailed == 0 || res.SamplesCompleted == 0 {
				t.Fatalf("%d failed, %d completed: want some of each", res.SamplesFailed, res.SamplesCompleted)
			}
			nFailed := fmt.Sprintf("%d failed", res.SamplesFailed)

			// LoadGen's convention stays where LoadGen's logs need it.
			if res.SampleLatency.MaxNs != 9223372036854775807 {
				t.Errorf("result.json sample_latency max %d, want LoadGen's INT64_MAX for a failed sample", res.SampleLatency.MaxNs)
			}
			summary := readFile(t, dir, runlog.SummaryFile)
			if !strings.Contains(summary, "Max latency (ns)                : 9223372036854775807") {
				t.Errorf("the summary's LoadGen lines lost LoadGen's convention:\n%s", summary)
			}

			checkAnsweredStats(t, res)
			checkNetloadgenSection(t, summary)

			// The summary's own lines: netloadgen's, after LoadGen's.
			readable := summary[strings.Index(summary, "In readable units:"):]
			readable = readable[:strings.Index(readable, "\n  issue lateness")]
			if strings.Contains(readable, "failed,") || !answeredP99.MatchString(readable) || !strings.Contains(readable, nFailed) {
				t.Errorf("readable units %q: want the answered p99 with %q", readable, nFailed)
			}
			verdict := inv.stdout[:strings.Index(inv.stdout, "\n")]
			if strings.Contains(verdict, failedNs) || strings.Contains(verdict, "p99 failed") ||
				!answeredP99.MatchString(verdict) || !strings.Contains(verdict, nFailed) {
				t.Errorf("verdict line %q: want the answered p99 with %q", verdict, nFailed)
			}
			spectrum := readFile(t, dir, runlog.SpectrumFile)
			if !strings.Contains(inv.stdout, spectrum) {
				t.Errorf("--latency did not print latency_spectrum.txt")
			}
			for name, text := range map[string]string{
				"stdout": inv.stdout, runlog.SpectrumFile: spectrum,
				runlog.TimeseriesCSVFile: readFile(t, dir, runlog.TimeseriesCSVFile), runlog.TimeseriesJSONFile: readFile(t, dir, runlog.TimeseriesJSONFile),
			} {
				if strings.Contains(text, failedNs) {
					t.Errorf("%s shows a failed sample's INT64_MAX:\n%s", name, text)
				}
			}
			if !strings.Contains(spectrum, nFailed) {
				t.Errorf("%s does not say %q:\n%s", runlog.SpectrumFile, nFailed, spectrum)
			}
			checkReport(t, dir, nFailed)
			checkRejudge(t, dir, nFailed)
		})
	}
}

// checkReport: the HTML report of run directory dir, its figures table,
// trial tables and plots, shows no INT64_MAX (not even in a data-value)
// and says want.
func checkReport(t *testing.T, dir, want string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.html")
	if inv := mainArgs("report", dir, "-o", out); inv.code != 0 {
		t.Fatalf("report: %v", inv)
	}
	page := readFile(t, filepath.Dir(out), filepath.Base(out))
	if i := strings.Index(page, failedNs); i >= 0 {
		t.Errorf("the report shows a failed sample's INT64_MAX: …%s…", page[max(i-300, 0):min(i+100, len(page))])
	}
	if !strings.Contains(page, want) {
		t.Errorf("the report does not say %q", want)
	}
}

// checkRejudge: `loadgend rejudge` of the run's samples.txt prints and
// writes the answered percentiles as the run did.
func checkRejudge(t *testing.T, dir, nFailed string) {
	t.Helper()
	out := t.TempDir()
	inv := mainArgs("rejudge", "--samples", filepath.Join(dir, runlog.SamplesFile), "--out", out)
	if inv.code != exitValid && inv.code != exitInvalid {
		t.Fatalf("rejudge: %v", inv)
	}
	if strings.Contains(inv.stdout, failedNs) || !answeredP99.MatchString(inv.stdout) || !strings.Contains(inv.stdout, nFailed) {
		t.Errorf("rejudge's line %q: want the answered p99 with %q", inv.stdout, nFailed)
	}
	if !strings.Contains(readFile(t, out, runlog.ResultFile), "sample_latency_answered") {
		t.Errorf("rejudge's result.json has no sample_latency_answered")
	}
}

// checkNetloadgenSection: the summary's section netloadgen adds after
// LoadGen's shows no INT64_MAX but in the line that explains LoadGen's
// convention.
func checkNetloadgenSection(t *testing.T, summary string) {
	t.Helper()
	i := strings.Index(summary, "netloadgen Network Stats")
	if i < 0 {
		t.Fatalf("no netloadgen section:\n%s", summary)
	}
	for _, l := range strings.Split(summary[i:], "\n") {
		if strings.Contains(l, failedNs) && !strings.Contains(l, "their latency is") {
			t.Errorf("netloadgen's summary line %q shows a failed sample's INT64_MAX", l)
		}
	}
}

// checkAnsweredStats: result.json's sample_latency_answered holds the
// percentiles of the answered samples only, with the failed count beside.
func checkAnsweredStats(t *testing.T, res *loadgen.Result) {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	ans, ok := raw["sample_latency_answered"]
	if !ok {
		t.Errorf("result.json has no sample_latency_answered")
		return
	}
	var st loadgen.LatencyStats
	if err := json.Unmarshal(ans, &st); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(ans, []byte(failedNs)) {
		t.Errorf("sample_latency_answered carries INT64_MAX: %s", ans)
	}
	if int64(st.Count) != res.SamplesCompleted || int64(st.Failed) != res.SamplesFailed || st.MaxNs <= 0 || len(st.Percentiles) == 0 {
		t.Errorf("sample_latency_answered %s: want count %d answered, failed %d", ans, res.SamplesCompleted, res.SamplesFailed)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSearchWithFailedSamplesShowsAnsweredPercentiles: a find-peak of a
// couple of trials and a sweep against the server failing every tenth
// request. Their tables show each trial's answered latency with how many
// failed, never 9223372036854.775 ms; search.json keeps both.
func TestSearchWithFailedSamplesShowsAnsweredPercentiles(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	common := []string{"--model", "m", "--min-duration-ms", "200", "--min-query-count", "20",
		"--target-latency-ms", "50"}
	for _, c := range []struct {
		name      string
		fromProbe int64
		args      []string
	}{
		// The base trial passes; the next one has failures.
		{"find-peak", 2, []string{"--mode", "find-peak", "--target-qps", "100", "--search-upper", "200", "--search-precision", "100", "--max-trials", "2"}},
		{"sweep", 1, []string{"--mode", "sweep", "--rates", "100,150"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := everyTenthFails(t, c.fromProbe)
			dir := t.TempDir()
			var out, errb bytes.Buffer
			args := append(append([]string{"--target", "http://" + addr}, common...), c.args...)
			code := runCommand(append(args, "--out", dir), &out, &errb)
			if code == exitError {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
			}
			res, err := search.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			table := out.String()
			saved := readFile(t, dir, search.SummaryFile)
			for name, text := range map[string]string{"stdout": table, search.SummaryFile: saved} {
				if strings.Contains(text, failedNs) {
					t.Errorf("%s shows a failed sample's INT64_MAX:\n%s", name, text)
				}
			}
			if len(res.Trials) != 2 {
				t.Fatalf("%d trials, want 2:\n%s", len(res.Trials), table)
			}
			if res.Trials[1].FailedSamples == 0 {
				t.Fatalf("trial 2 has no failed samples: the server fails every tenth request:\n%s", table)
			}
			for _, tr := range res.Trials {
				if tr.LatencyAnswered == nil || tr.LatencyAnswered.P99 <= 0 {
					t.Errorf("trial %d: answered latency %+v: want the answered p99", tr.Index, tr.LatencyAnswered)
				}
				if tr.Criteria != nil && tr.Criteria.NoFailedSamples {
					continue
				}
				if tr.FailedSamples == 0 {
					t.Errorf("trial %d had failures but failed_samples is 0", tr.Index)
					continue
				}
				if !strings.Contains(table, fmt.Sprintf("%d failed", tr.FailedSamples)) {
					t.Errorf("the table does not say trial %d's %d failed:\n%s", tr.Index, tr.FailedSamples, table)
				}
			}
			checkReport(t, dir, fmt.Sprintf("%d failed", res.Trials[1].FailedSamples))
		})
	}
}

// everyTenthStreamFails is an OpenAI chat server over HTTP/1.1 on a raw
// net.Listener: GET /v1/models lists model "llm", and of the POST
// /v1/chat/completions (counted over every connection) each tenth gets
// failAnswer (HTTP 500), the others a stream of four tokens, its usage
// and [DONE], each event its own chunk. It returns its target URL.
func everyTenthStreamFails(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
	chunk := func(s string) { fmt.Fprintf(&b, "%x\r\n%s\r\n", len(s), s) }
	chunk(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n")
	for _, tok := range []string{"a", " b", " c", " d"} {
		chunk(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + tok + `"}}]}` + "\n\n")
	}
	chunk(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":16,"completion_tokens":4,"total_tokens":20}}` + "\n\n")
	chunk("data: [DONE]\n\n")
	b.WriteString("0\r\n\r\n")
	stream := b.String()
	var posts atomic.Int64
	addr, _ := testtool.RawHTTP(t, func(line string) string {
		switch p := testtool.RequestPath(line); {
		case p == "/v1/models":
			return rawAnswer("200 OK", `{"object":"list","data":[{"id":"llm","object":"model"}]}`)
		case p == "/v1/chat/completions" && posts.Add(1)%10 == 0:
			return failAnswer
		case p == "/v1/chat/completions":
			return stream
		}
		return rawAnswer("404 Not Found", `{"error":"not found"}`)
	})
	return "http://" + addr
}

// TestTokenLatenciesWithFailedSamplesShowAnswered: a Server run judged by
// token latencies against a streaming server that answers every tenth
// request with HTTP 500. result.json's token_latencies keep LoadGen's
// ttft and tpot tables and add ttft_answered and tpot_answered; the
// verdict line shows the answered TTFT and TPOT with the failures beside
// them, never INT64_MAX.
func TestTokenLatenciesWithFailedSamplesShowAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	dir := t.TempDir()
	inv := runArgs("--target", everyTenthStreamFails(t), "--model", "llm", "--api", "openai-chat", "--scenario", "Server",
		"--target-qps", "100", "--min-duration-ms", "300", "--min-query-count", "40", "--use-token-latencies",
		"--ttft-latency-ms", "500", "--tpot-latency-ms", "100", "--no-early-verdict", "--out", dir)
	res := completedRun(t, inv, dir)
	tl := res.TokenLatencies
	if res.SamplesFailed == 0 || tl == nil {
		t.Fatalf("%d failed, token_latencies %+v: want failures judged by token latencies", res.SamplesFailed, tl)
	}
	if tl.TTFTAtPercentileNs != 9223372036854775807 || tl.TTFT.MaxNs != 9223372036854775807 {
		t.Errorf("token_latencies ttft at the percentile %d, max %d: want LoadGen's INT64_MAX for the failed samples", tl.TTFTAtPercentileNs, tl.TTFT.MaxNs)
	}
	for name, a := range map[string]*loadgen.LatencyStats{"ttft_answered": tl.TTFTAnswered, "tpot_answered": tl.TPOTAnswered} {
		if a == nil || int64(a.Count) != res.SamplesCompleted || int64(a.Failed) != res.SamplesFailed || a.MaxNs == 9223372036854775807 {
			t.Errorf("token_latencies %s %+v: want the %d answered samples' table, %d failed", name, a, res.SamplesCompleted, res.SamplesFailed)
		}
	}
	checkNetloadgenSection(t, readFile(t, dir, runlog.SummaryFile))
	verdict := inv.stdout[:strings.Index(inv.stdout, "\n")]
	if strings.Contains(verdict, failedNs) || !regexp.MustCompile(`TTFT p99 [0-9.]+ ms \(bound`).MatchString(verdict) ||
		!strings.Contains(verdict, fmt.Sprintf("%d failed", res.SamplesFailed)) {
		t.Errorf("verdict line %q: want the answered TTFT and TPOT with %d failed", verdict, res.SamplesFailed)
	}
}

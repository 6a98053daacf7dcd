package daemon_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// A run's page while it goes shows, from the event stream, a generative
// run's token figures and the failures so far by kind (harness:
// console_harness_test.go).

// liveLLM is sutproxy's simulated LLM for these tests: a request asking
// more than 24 output tokens is refused (HTTP 400), so a run whose output
// lengths spread past 24 fails some of its requests, as many as its data
// asks, the rest answered with tokens.
const liveLLM = "name=chat,kind=llm,step=2ms,max_tokens_limit=24"

// liveSpec is a generative Server run of chat at qps for ms, output
// lengths drawn from outputLaw. The early verdict is off: a run whose
// failures settle it INVALID would stop at its first one.
func liveSpec(target string, qps, ms int, outputLaw string) string {
	return fmt.Sprintf(`{"target":%q,"model":"chat","scenario":"Server","input_tokens":"16","output_tokens":%q,`+
		`"settings":{"target_qps":%d,"min_duration_ms":%d,"min_query_count":1,"target_latency_ms":2000,"latency_percentile":0.9,"early_verdict":false}}`,
		target, outputLaw, qps, ms)
}

// startLive is loadgend and sutproxy serving liveLLM, and a tab opened
// first (Chromium's start takes the machine's CPUs: the run would be late).
func startLive(t *testing.T) (*tab, e2eClient, string) {
	t.Helper()
	p := sutproxytest.Start(t, liveLLM)
	_, c := e2eService(t, nil)
	tb := newTab(t, 0)
	tb.run(chromedp.Navigate("about:blank"))
	return tb, c, sutproxytest.Target(p, "http")
}

// stillRunning says whether the page is still the live view (no verdict
// yet): what it showed was shown while the run went.
func stillRunning(t *testing.T, tb *tab) bool {
	t.Helper()
	var live bool
	tb.run(chromedp.Evaluate(`document.querySelector('#verdict') === null && document.querySelector('#state').textContent === 'running'`, &live))
	return live
}

// A generative run's page shows TTFT, TPOT and output tokens per second
// while the run goes, each above 0, and the live page passes the
// accessibility checks at 390 px; then the run is cancelled.
func TestConsoleLiveTokens(t *testing.T) {
	p := sutproxytest.Start(t, liveLLM)
	_, c := e2eService(t, nil)
	tb := newTab(t, 390)
	tb.run(chromedp.Navigate("about:blank"))
	// Long enough to outlast the checks: the test cancels it.
	id := c.submit(t, liveSpec(sutproxytest.Target(p, "http"), 20, 60000, "16"))
	tb.run(chromedp.Navigate(c.base+"/ui/runs/"+id), chromedp.WaitVisible("main[data-ready]", chromedp.ByQuery),
		chromedp.WaitVisible(`#live-tokens [data-live="tpot_p99_ms"]`, chromedp.ByQuery))
	var shown map[string]string
	tb.run(chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('#live-tokens [data-live]')].map((e) => [e.dataset.live, e.textContent]))`, &shown))
	if !stillRunning(t, tb) {
		t.Fatalf("the run ended before its page showed its tokens live (shown %v)", shown)
	}
	for _, key := range []string{"ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p99_ms", "output_tokens_per_second", "output_tokens"} {
		text := strings.TrimSuffix(strings.ReplaceAll(shown[key], ",", ""), " ms")
		if v, err := strconv.ParseFloat(text, 64); err != nil || v <= 0 {
			t.Errorf("live %s shows %q, want a value above 0", key, shown[key])
		}
	}
	checkA11y(t, tb, "a live generative run at 390 px")
	tb.shot("run-live-tokens")
	c.do(t, http.MethodPost, "/v1/runs/"+id+"/cancel", "{}")
	if st := c.waitEnded(t, id, time.Minute); st.State != api.StateCancelled || st.Progress == nil || st.Progress.Tokens == nil {
		t.Errorf("the run ended %s with last progress %+v; want cancelled, with tokens", st.State, st.Progress)
	}
}

// A run whose server refuses some requests shows its failures by kind
// while it goes (rows data-failure="<outcome>"), of the kinds and at most
// the counts result.json ends with; the run's last progress counts them as
// result.json does, and the ended page shows result.json's table.
func TestConsoleLiveFailures(t *testing.T) {
	tb, c, target := startLive(t)
	id := c.submit(t, liveSpec(target, 20, 6000, "uniform:8:40"))
	tb.run(chromedp.Navigate(c.base+"/ui/runs/"+id), chromedp.WaitVisible("main[data-ready]", chromedp.ByQuery),
		chromedp.WaitVisible(`#live-failures tr[data-failure]`, chromedp.ByQuery))
	type row struct {
		Outcome, Status, Count string
	}
	var live []row
	tb.run(chromedp.Evaluate(`[...document.querySelectorAll('#live-failures tr[data-failure]')].map((r) => ({Outcome: r.dataset.failure, Status: r.dataset.status, Count: r.querySelector('.count').textContent}))`, &live))
	running := stillRunning(t, tb)
	tb.shot("run-live-failures")
	if !running {
		t.Fatalf("the run ended before its page showed its failures live (shown %v)", live)
	}

	st := c.waitEnded(t, id, time.Minute)
	if st.State != api.StateDone || len(st.Failures) == 0 {
		t.Fatalf("the run ended %s with failures %+v; want done, with failures", st.State, st.Failures)
	}
	for _, r := range live {
		i := slices.IndexFunc(st.Failures, func(f api.Failure) bool { return f.Outcome == r.Outcome && f.Status == r.Status })
		n, err := strconv.ParseInt(strings.ReplaceAll(r.Count, ",", ""), 10, 64)
		if i < 0 || err != nil || n <= 0 || n > st.Failures[i].Count {
			t.Errorf("live row %+v: not a kind of result.json's %+v, or its count is not within it", r, st.Failures)
		}
	}
	// What the stream said last is what result.json says.
	var last []api.LiveFailure
	if st.Progress != nil {
		last = st.Progress.Failures
	}
	want := make([]api.LiveFailure, 0, len(st.Failures))
	for _, f := range st.Failures {
		want = append(want, api.LiveFailure{Outcome: f.Outcome, Status: f.Status, Count: f.Count})
	}
	if !slices.Equal(last, want) {
		t.Errorf("the run's last progress counts %+v, result.json %+v", last, want)
	}
	var ended []string
	tb.run(chromedp.WaitVisible("#verdict", chromedp.ByQuery), chromedp.WaitVisible("#failures", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#failures tbody tr')].map((r) => r.cells[0].textContent + ' ' + r.cells[2].textContent)`, &ended))
	tb.shot("run-ended-failures")
	var wantRows []string
	for _, f := range st.Failures {
		wantRows = append(wantRows, fmt.Sprintf("%s %s", f.Outcome, strconv.FormatInt(f.Count, 10)))
	}
	if !slices.Equal(ended, wantRows) {
		t.Errorf("the ended page's failures %q, result.json's %q", ended, wantRows)
	}
}

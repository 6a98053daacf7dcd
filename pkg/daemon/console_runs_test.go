package daemon_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/netloadgen/netloadgen/api"
)

// The runs page and a run's page in a real browser (harness:
// console_harness_test.go).

// A Server run watched from its page: live progress, then its verdict,
// and every figure shown as result.json says.
func TestConsoleRunPage(t *testing.T) {
	env := startConsole(t, nil)
	// The browser first: its start takes the machine's CPUs, which would
	// make the run late.
	tb := newTab(t, 0)
	tb.run(chromedp.Navigate("about:blank"))
	// 4 s: the page, opened as the run starts, must see it live (a page
	// that only ever showed the ended run would fail here).
	id := env.api.submit(t, consoleSpec(env.target, 50, 4000))
	tb.run(chromedp.Navigate(env.base+"/ui/runs/"+id), chromedp.WaitVisible("main[data-ready]", chromedp.ByQuery))
	// The live view: issued grows above 0 (from the event stream) while
	// the run goes.
	var live bool
	tb.run(chromedp.WaitVisible(`#run-progress[data-issued]:not([data-issued="0"]), #verdict`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#verdict') === null`, &live))
	tb.shot("run-live")
	if !live {
		t.Fatalf("the run's page showed its verdict before any live progress (status %+v)", env.api.status(t, id))
	}
	// Latency per second (the progress events' recent window) shows while
	// the run still goes.
	var perSecond string
	tb.run(chromedp.Poll(`(() => { const c = document.querySelector('[data-live="Latency p99 (last second)"]');
		return document.querySelector('#verdict') !== null || (c !== null && c.textContent !== '–'); })()`, nil, chromedp.WithPollingTimeout(stepTimeout)),
		chromedp.Evaluate(`document.querySelector('#verdict') === null ? document.querySelector('[data-live="Latency p99 (last second)"]').textContent : ''`, &perSecond))
	if !strings.HasSuffix(perSecond, " ms") {
		t.Errorf("the live page showed no latency per second before the run ended (got %q)", perSecond)
	}
	checkVerdictAndFigures(t, tb, env, id, "run-ended")
}

// checkVerdictAndFigures waits for a run's page (open in tb) to show its
// verdict, wants VALID, and wants every figure the page shows
// ([data-figure]) to be result.json's, formatted as the page formats it.
func checkVerdictAndFigures(t *testing.T, tb *tab, env consoleEnv, id, shot string) {
	t.Helper()
	var verdict string
	tb.run(chromedp.WaitVisible("#verdict", chromedp.ByQuery), chromedp.Text("#verdict", &verdict, chromedp.ByQuery),
		chromedp.WaitVisible("#files button[data-file]", chromedp.ByQuery))
	tb.shot(shot)
	if verdict != "VALID" {
		t.Fatalf("#verdict = %q, want VALID (status %+v)", verdict, env.api.status(t, id))
	}
	var shown map[string]string
	tb.run(chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll('[data-figure]')].map((e) => [e.dataset.figure, e.textContent]))`, &shown))
	result := runResultJSON(t, env, id)
	for _, key := range []string{"result_validity", "samples_issued", "samples_completed", "metric.value", "sample_latency_answered.p99", "duration_ns"} {
		if _, ok := shown[key]; !ok {
			t.Errorf("figure %s not shown (shown: %v)", key, shown)
		}
	}
	for key, got := range shown {
		if want := figureText(t, result, key); got != want {
			t.Errorf("figure %s shows %q, result.json gives %q", key, got, want)
		}
	}
}

// A long run cancelled with its page's button ends cancelled, on the page
// and in the API; a run queued behind it shows its position, on the runs
// page and on its own.
func TestConsoleCancelAndQueue(t *testing.T) {
	env := startConsole(t, nil)
	long := env.api.submit(t, consoleSpec(env.target, 50, 60000))
	env.api.waitProgress(t, long, 30*time.Second, func(p api.Progress) bool { return p.Issued > 0 })
	queued := env.api.submit(t, consoleSpec(env.target, 20, 1000))
	tb := newTab(t, 0)

	var pos, own string
	tb.run(chromedp.Navigate(env.base+"/ui/"), chromedp.WaitVisible(`#queue tr[data-run-id="`+queued+`"]`, chromedp.ByQuery),
		chromedp.Text(`#queue tr[data-run-id="`+queued+`"] td`, &pos, chromedp.ByQuery))
	tb.shot("runs-queue")
	if pos != "1" {
		t.Errorf("the queued run's position on the runs page = %q, want 1", pos)
	}
	// The page refreshes while runs are queued, and keeps the keyboard's
	// place: the focused link is focused again after the redraw.
	var loads string
	var ok, focused bool
	tb.run(chromedp.Focus(`#runs tr[data-run-id="`+queued+`"] a`, chromedp.ByQuery),
		chromedp.AttributeValue("#history", "data-loads", &loads, &ok, chromedp.ByQuery))
	n, _ := strconv.Atoi(loads)
	tb.run(chromedp.WaitVisible(fmt.Sprintf(`#history[data-loads="%d"]`, n+1), chromedp.ByQuery),
		chromedp.Evaluate(`document.activeElement.tagName === 'A' && document.activeElement.closest('tr').dataset.runId === `+strconv.Quote(queued), &focused))
	if !focused {
		t.Errorf("after a refresh the focus left the queued run's link")
	}
	tb.run(chromedp.Navigate(env.base+"/ui/runs/"+queued), chromedp.WaitVisible("#queue-position", chromedp.ByQuery),
		chromedp.Text("#queue-position", &own, chromedp.ByQuery))
	tb.shot("run-queued")
	if !strings.Contains(own, "1 run(s) ahead") {
		t.Errorf("the queued run's page says %q, want its position (1 ahead)", own)
	}

	var state, note string
	tb.run(chromedp.Navigate(env.base+"/ui/runs/"+long), chromedp.WaitVisible("#cancel", chromedp.ByQuery),
		chromedp.Click("#cancel", chromedp.ByQuery),
		chromedp.WaitVisible("#verdict", chromedp.ByQuery),
		chromedp.Text("#state", &state, chromedp.ByQuery), chromedp.Text("#end-note", &note, chromedp.ByQuery))
	tb.shot("run-cancelled")
	if state != "cancelled" || !strings.Contains(note, "cancelled") {
		t.Errorf("after Cancel the page says state %q, note %q; want cancelled", state, note)
	}
	if st := env.api.waitEnded(t, long, 30*time.Second); st.State != api.StateCancelled {
		t.Errorf("the API says the run is %s, want cancelled", st.State)
	}
	env.api.do(t, http.MethodPost, "/v1/runs/"+queued+"/cancel", "{}")
	env.api.waitEnded(t, queued, 30*time.Second)
}

// The runs page lists the runs newest first, pages with Next and First,
// and filters by state, verdict and model (kept in the URL).
func TestConsoleRunsList(t *testing.T) {
	env := startConsole(t, nil)
	a := env.api.submit(t, consoleSpec(env.target, 20, 500))
	env.api.waitEnded(t, a, 30*time.Second)
	b := env.api.submit(t, consoleSpec(env.target, 20, 500))
	env.api.waitEnded(t, b, 30*time.Second)
	c := env.api.submit(t, consoleSpec(env.target, 20, 60000))
	env.api.do(t, http.MethodPost, "/v1/runs/"+c+"/cancel", "{}")
	env.api.waitEnded(t, c, 30*time.Second)

	tb := newTab(t, 390)
	tb.allow(http.StatusBadRequest, "/v1/runs")           // the bad filter
	tb.allow(http.StatusNotFound, "/v1/runs/no-such-run") // the missing run's page
	rows := func() []string {
		var ids []string
		tb.run(chromedp.Evaluate(`[...document.querySelectorAll('#runs tr[data-run-id]')].map((r) => r.dataset.runId)`, &ids))
		return ids
	}
	tb.run(chromedp.Navigate(env.base+"/ui/?limit=2"), chromedp.WaitVisible("main[data-ready] #runs", chromedp.ByQuery))
	tb.shot("runs-page1")
	if got := rows(); !slices.Equal(got, []string{c, b}) {
		t.Fatalf("first page rows = %v, want %v (newest first)", got, []string{c, b})
	}
	tb.run(chromedp.Click("#page-next", chromedp.ByQuery),
		chromedp.WaitVisible(`#runs tr[data-run-id="`+a+`"]`, chromedp.ByQuery))
	tb.shot("runs-page2")
	if got := rows(); !slices.Equal(got, []string{a}) {
		t.Errorf("second page rows = %v, want [%s]", got, a)
	}
	tb.run(chromedp.Click("#page-first", chromedp.ByQuery),
		chromedp.WaitVisible(`#runs tr[data-run-id="`+c+`"]`, chromedp.ByQuery))

	var url string
	tb.run(chromedp.SetValue("#filter-state", "done", chromedp.ByQuery), chromedp.Click(`#runs-filter button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`#runs tr[data-run-id="`+c+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#runs tr[data-run-id="`+b+`"]`, chromedp.ByQuery), chromedp.Location(&url))
	tb.shot("runs-filtered")
	if got := rows(); !slices.Equal(got, []string{b, a}) {
		t.Errorf("state=done rows = %v, want %v", got, []string{b, a})
	}
	if !strings.Contains(url, "state=done") {
		t.Errorf("the filtered view's URL %s does not keep the filter", url)
	}
	// The filtered view is a link: loading it again shows the same rows.
	tb.run(chromedp.Navigate(url), chromedp.WaitVisible("main[data-ready] #runs", chromedp.ByQuery))
	if got := rows(); !slices.Equal(got, []string{b, a}) {
		t.Errorf("%s rows = %v, want %v", url, got, []string{b, a})
	}

	// Verdict and model, from the form: the rows the API's statuses say.
	var noVerdict []string
	for _, id := range []string{c, b, a} {
		if v := env.api.status(t, id).Validity; v != "VALID" && v != "INVALID" {
			noVerdict = append(noVerdict, id)
		}
	}
	tb.run(chromedp.Navigate(env.base+"/ui/"), chromedp.WaitVisible("main[data-ready] #runs", chromedp.ByQuery),
		chromedp.SetValue("#filter-verdict", "none", chromedp.ByQuery), chromedp.Click(`#runs-filter button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`#runs tr[data-run-id="`+a+`"]`, chromedp.ByQuery), chromedp.Location(&url))
	if got := rows(); !slices.Equal(got, noVerdict) || !strings.Contains(url, "verdict=none") {
		t.Errorf("verdict=none: rows %v at %s, want %v", got, url, noVerdict)
	}
	var empty string
	tb.run(chromedp.SetValue("#filter-verdict", "", chromedp.ByQuery), chromedp.SetValue("#filter-model", "no-such-model", chromedp.ByQuery),
		chromedp.Click(`#runs-filter button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`#runs tr[data-run-id]`, chromedp.ByQuery), chromedp.Text("#runs tbody", &empty, chromedp.ByQuery))
	tb.shot("runs-no-match")
	if !strings.Contains(empty, "No runs match") {
		t.Errorf("model=no-such-model: the table says %q, want that no runs match", empty)
	}

	// A link with a bad filter shows the API's field error by the filters;
	// a link to no run says so. Neither is a script error.
	var bad, missing string
	tb.run(chromedp.Navigate(env.base+"/ui/?state=bogus"), chromedp.WaitVisible("main[data-ready] #filter-error", chromedp.ByQuery),
		chromedp.Text("#filter-error", &bad, chromedp.ByQuery))
	tb.shot("runs-bad-filter")
	if !strings.HasPrefix(bad, "state: ") {
		t.Errorf("?state=bogus: the filter error says %q, want the API's error on field state", bad)
	}
	tb.run(chromedp.Navigate(env.base+"/ui/runs/no-such-run"), chromedp.WaitVisible("main[data-ready] .error", chromedp.ByQuery),
		chromedp.Text("main .error", &missing, chromedp.ByQuery))
	if missing == "" {
		t.Errorf("a run that does not exist: its page shows no error")
	}
}

// closedTarget is the URL of a loopback port that was just free (a
// listener opened and closed): a run against it is refused, where a fixed
// port might be served by something else on the machine.
func closedTarget(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// consoleSpec is a Server run of the identity model at qps for
// durationMs, judged at p90 (early stopping needs some 100 queries there,
// p99 some 500) with a 2 s bound: the tests are of the pages, not of the
// load generator on a busy 2-core machine. It scrapes the server's
// metrics as runs do by default (the browser is started on a thread of
// its own, startBrowser, so a scrape's thread ending does not kill it).
func consoleSpec(target string, qps, durationMs int) string {
	return fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server","settings":{"target_qps":%d,"min_duration_ms":%d,"min_query_count":1,"target_latency_ms":2000,"latency_percentile":0.9}}`,
		target, qps, durationMs)
}

// runResultJSON is GET /v1/runs/{id}/result, numbers kept as written.
func runResultJSON(t *testing.T, env consoleEnv, id string) map[string]any {
	t.Helper()
	code, b := env.api.do(t, http.MethodGet, "/v1/runs/"+id+"/result", "")
	if code != http.StatusOK {
		t.Fatalf("GET result = %d %s", code, b)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

var percentileKey = regexp.MustCompile(`^p(\d+)$`)

// valueAt is rundata.js's valueAt: a dotted path, pNN naming a latency
// table's percentiles[] entry with p = 0.NN.
func valueAt(v any, key string) (any, bool) {
	for _, k := range strings.Split(key, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if next, ok := m[k]; ok {
			v = next
			continue
		}
		pm := percentileKey.FindStringSubmatch(k)
		list, ok := m["percentiles"].([]any)
		if pm == nil || !ok {
			return nil, false
		}
		want, _ := strconv.ParseFloat("0."+pm[1], 64)
		v = nil
		for _, e := range list {
			if em, ok := e.(map[string]any); ok && numberOf(em["p"]) == want {
				v = em["latency_ns"]
			}
		}
		if v == nil {
			return nil, false
		}
	}
	return v, true
}

func numberOf(v any) float64 {
	n, _ := v.(json.Number)
	f, _ := n.Float64()
	return f
}

// figureText formats result.json's value at key as rundata.js does:
// words as they are; counts and rates en-US with grouping (rates to 2
// decimals, ICU's half-up on the shortest digits); ns as ms or s with 2
// decimals (toFixed: half-up on the exact binary value).
func figureText(t *testing.T, result map[string]any, key string) string {
	v, ok := valueAt(result, key)
	if !ok || v == nil {
		return "–"
	}
	if s, ok := v.(string); ok {
		return s
	}
	f := numberOf(v)
	switch {
	case strings.HasPrefix(key, "samples_"):
		return grouped(roundHalfUp(strconv.FormatFloat(f, 'f', -1, 64), 0))
	case key == "metric.value" && metricUnit(result) == "ns":
		return roundHalfUp(new(big.Float).SetFloat64(f/1e6).Text('f', 80), 2) + " ms"
	case key == "target_qps" || key == "metric.value" || strings.HasSuffix(key, "_per_second"):
		return grouped(strings.TrimSuffix(strings.TrimRight(roundHalfUp(strconv.FormatFloat(f, 'f', -1, 64), 2), "0"), "."))
	case key == "duration_ns":
		return roundHalfUp(new(big.Float).SetFloat64(f/1e9).Text('f', 80), 2) + " s"
	default:
		return roundHalfUp(new(big.Float).SetFloat64(f/1e6).Text('f', 80), 2) + " ms"
	}
}

// metricUnit is result.json's metric.unit ("" when absent).
func metricUnit(result map[string]any) string {
	m, _ := result["metric"].(map[string]any)
	u, _ := m["unit"].(string)
	return u
}

// roundHalfUp rounds a non-negative decimal string to digits decimals,
// a tie up; the result has exactly digits decimals.
func roundHalfUp(s string, digits int) string {
	ip, fp, _ := strings.Cut(s, ".")
	fp += strings.Repeat("0", digits+1)
	up := fp[digits] >= '5'
	n := new(big.Int)
	n.SetString(ip+fp[:digits], 10)
	if up {
		n.Add(n, big.NewInt(1))
	}
	out := n.String()
	if digits == 0 {
		return out
	}
	if len(out) <= digits {
		out = strings.Repeat("0", digits-len(out)+1) + out
	}
	return out[:len(out)-digits] + "." + out[len(out)-digits:]
}

// grouped puts en-US thousands separators in a number's integer part.
func grouped(s string) string {
	ip, fp, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range ip {
		if i > 0 && (len(ip)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		return b.String() + "." + fp
	}
	return b.String()
}

// A sweep's page shows its trials (a row and a point each), and a run's
// the failures by kind of a server that fails every tenth request; a run that
// could not start shows that it failed, and why.
func TestConsoleSweepAndFailedPages(t *testing.T) {
	target := everyTenthFailing(t)
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	tb.run(chromedp.Navigate("about:blank"))
	sweep := env.api.submit(t, fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server",`+
		`"settings":{"min_duration_ms":400,"min_query_count":10,"target_latency_ms":2000,"latency_percentile":0.9,"early_verdict":false},`+
		`"search":{"mode":"sweep","rates":[20,40]}}`, target))
	st := env.api.waitEnded(t, sweep, 60*time.Second)
	if st.State != api.StateDone || len(st.Trials) != 2 {
		t.Fatalf("sweep: state %s, %d trials: want done with 2", st.State, len(st.Trials))
	}
	var charts int
	var failedShown []string
	tb.run(chromedp.Navigate(env.base+"/ui/runs/"+sweep), chromedp.WaitVisible("main[data-ready] #trials-table", chromedp.ByQuery),
		chromedp.WaitVisible("#trials .chart", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#trials-table tr[data-trial] td.failed')].map((e) => e.textContent)`, &failedShown),
		chromedp.Evaluate(`document.querySelectorAll('#trials .chart').length`, &charts))
	tb.shot("run-sweep")
	var failedAPI []string
	for _, tr := range st.Trials {
		failedAPI = append(failedAPI, strconv.FormatInt(tr.FailedSamples, 10))
	}
	if !slices.Equal(failedShown, failedAPI) || charts != 2 {
		t.Errorf("the sweep's page shows trials' failed samples %v and %d trial charts, want %v and 2", failedShown, charts, failedAPI)
	}
	// A trial's row gives its files (a trial has no page: no link), and
	// its result.json button downloads the API's trial file: the blob the
	// page saves is caught as it is made.
	var links int
	var got string
	tb.run(chromedp.Evaluate(`document.querySelectorAll('#trials-table a').length`, &links),
		chromedp.Evaluate(`window.__blobs = []; const real = URL.createObjectURL; URL.createObjectURL = (b) => { window.__blobs.push(b); return real(b); }; true`, nil),
		chromedp.Click(`#trials-table tr[data-trial="2"] button[data-trial-file="result.json"]`, chromedp.ByQuery),
		chromedp.Poll(`window.__blobs.length === 1`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate(`window.__blobs[0].text()`, &got, awaitPromise))
	if links != 0 {
		t.Errorf("the trials table has %d links (a trial has no page)", links)
	}
	code, want := env.api.do(t, "GET", "/v1/runs/"+sweep+"/trials/2/files/result.json", "")
	if code != 200 || got != string(want) || !strings.Contains(got, `"result_validity"`) {
		t.Errorf("trial 2's result.json downloaded from its row: %.200q, the API gives %d %.200q", got, code, want)
	}

	one := env.api.submit(t, consoleSpec(target, 40, 500))
	ost := env.api.waitEnded(t, one, 30*time.Second)
	var failures int
	tb.run(chromedp.Navigate(env.base+"/ui/runs/"+one), chromedp.WaitVisible("main[data-ready] #verdict", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#failures tbody tr').length`, &failures))
	tb.shot("run-failures")
	if failures != len(ost.Failures) || failures == 0 {
		t.Errorf("the run's page shows %d kinds of failure, the API %d (want some)", failures, len(ost.Failures))
	}

	failed := env.api.submit(t, consoleSpec(closedTarget(t), 20, 500))
	fst := env.api.waitEnded(t, failed, 30*time.Second)
	if fst.State != api.StateFailed || fst.Error == "" {
		t.Fatalf("a run against a closed port: state %s, error %q; want failed with an error", fst.State, fst.Error)
	}
	var verdict, note, why string
	tb.run(chromedp.Navigate(env.base+"/ui/runs/"+failed), chromedp.WaitVisible("main[data-ready] #verdict", chromedp.ByQuery),
		chromedp.Text("#verdict", &verdict, chromedp.ByQuery), chromedp.Text("#end-note", &note, chromedp.ByQuery),
		chromedp.Text("#run-error", &why, chromedp.ByQuery))
	tb.shot("run-failed")
	if verdict != "failed" || !strings.Contains(note, "failed") || !strings.Contains(why, fst.Error) {
		t.Errorf("the failed run's page: verdict %q, note %q, error %q; want failed and the API's error %q", verdict, note, why, fst.Error)
	}
}

// A staged run's time charts mark where each stage after the first
// starts (timeseries.json's stages).
func TestConsoleStageMarks(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	tb.run(chromedp.Navigate("about:blank"))
	id := env.api.submit(t, fmt.Sprintf(`{"target":%q,"model":"identity","stages":"1s:20,1s:40"}`, env.target))
	if st := env.api.waitEnded(t, id, 30*time.Second); st.State != api.StateDone {
		t.Fatalf("staged run: %s %s", st.State, st.Error)
	}
	var marks []string
	tb.run(chromedp.Navigate(env.base+"/ui/runs/"+id), chromedp.WaitReady("main[data-ready] #plots .stage-mark", chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#plots .stage-mark')].map((m) => m.dataset.stage)`, &marks))
	tb.shot("run-stages")
	// Four time charts, each marking the second stage's start (stages
	// count from 0, as timeseries.json's do).
	if !slices.Equal(marks, []string{"1", "1", "1", "1"}) {
		t.Errorf("stage marks %v: want the second stage's start on each of the four time charts", marks)
	}
}

package report_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/report"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/stats"
)

// TestFiguresEqualResult: every figure the page shows of a real run equals
// result.json's (exactly in data-value, within its rounding in the text),
// the verdict included, and the headline ones are there.
func TestFiguresEqualResult(t *testing.T) {
	for _, name := range []string{"server500", "server1500"} {
		dir := copyRun(t, name)
		res := readJSON(t, filepath.Join(dir, "result.json"))
		page := render(t, dir)
		n := checkFigures(t, page, name, res, "metric.value", "target_qps", "samples_completed", "samples_failed",
			"sample_latency.p50", "sample_latency.p99", "sample_latency.p99.9", "issue_lateness.p99")
		if n < 15 {
			t.Errorf("%s: only %d figures checked", name, n)
		}
		v, text, ok := verdictShown(page, name)
		if !ok || v != res["result_validity"] || text != res["result_validity"] {
			t.Errorf("%s: verdict %q %q (found %v), result.json %v", name, v, text, ok, res["result_validity"])
		}
		if metric := res["metric"].(map[string]any)["name"].(string); !strings.Contains(page, ">"+metric+"<") {
			t.Errorf("%s: metric name %q not shown", name, metric)
		}
	}
}

// TestFiguresCatchAChange: the figure check fails when the page shows a
// number result.json does not have (it is not vacuous).
func TestFiguresCatchAChange(t *testing.T) {
	dir := copyRun(t, "server500")
	res := readJSON(t, filepath.Join(dir, "result.json"))
	page := render(t, dir)
	editResult(t, dir, func(m map[string]any) {
		m["sample_latency"].(map[string]any)["percentiles"].([]any)[4].(map[string]any)["latency_ns"] = 4294241
	})
	changed := render(t, dir) // p99 4.294 ms where result.json (res) says 4.194
	if shownFigures(page) == nil || len(shownFigures(page)) != len(shownFigures(changed)) {
		t.Fatal("the pages differ in their figures")
	}
	var bad []string
	for _, f := range shownFigures(changed) {
		jv, _ := lookup(res, f.Key)
		if f.Run == "server500" && f.Value != jv.String() {
			bad = append(bad, f.Key)
		}
	}
	if len(bad) != 1 || bad[0] != "sample_latency.p99" {
		t.Errorf("figures differing from the original result.json: %v, want [sample_latency.p99]", bad)
	}
}

// TestHostileStrings: strings from the files (sut_name, reasons, failure
// examples, the directory's name) are text in the page, never markup.
func TestHostileStrings(t *testing.T) {
	const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`
	dir := filepath.Join(t.TempDir(), `run<svg onload=alert(3)>`)
	if err := os.Rename(copyRun(t, "server500"), dir); err != nil {
		t.Fatal(err)
	}
	editResult(t, dir, func(m map[string]any) {
		m["sut_name"] = evil
		m["invalid_reasons"] = []string{evil}
		m["recommendations"] = []string{evil}
		m["warnings"] = []string{evil}
		m["samples_failed"] = 3
		m["failures"] = []map[string]any{{"outcome": evil, "status": evil, "count": 3, "example": evil}}
	})
	page := render(t, dir)
	for _, bad := range []string{"<script", "<img", "<svg onload"} {
		if strings.Contains(strings.ToLower(page), bad) {
			i := strings.Index(strings.ToLower(page), bad)
			t.Errorf("page contains %q: …%s…", bad, page[max(i-80, 0):min(i+80, len(page))])
		}
	}
	// Quoted attribute values are text; what is left of a tag is markup.
	bare := regexp.MustCompile(`"[^"]*"`).ReplaceAllString(page, `""`)
	if m := regexp.MustCompile(`(?i)<[a-z]+\b[^>]*\son[a-z]+=`).FindString(bare); m != "" {
		t.Errorf("an element with an event handler: %s", m)
	}
	if strings.Count(page, "&lt;script&gt;alert(1)&lt;/script&gt;") < 5 {
		t.Errorf("the hostile string is not shown escaped in each place:\n%s", page)
	}
}

// TestSelfContained: the page fetches nothing and runs no script: no
// script, link, img, iframe or object element, no src/href/url(), and a
// Content-Security-Policy that forbids both should a string slip through.
func TestSelfContained(t *testing.T) {
	page := render(t, copyRun(t, "server500"), copyRun(t, "server1500"), copyRun(t, "peak"))
	for _, re := range []string{`(?i)<(script|link|img|iframe|object|embed|base)\b`, `(?i)\s(src|href|xlink:href|action)\s*=`, `(?i)url\(`, `(?i)@import`} {
		if m := regexp.MustCompile(re).FindString(page); m != "" {
			t.Errorf("page has %q (%s)", m, re)
		}
	}
	if !strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;">`) &&
		!strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`) {
		t.Errorf("no Content-Security-Policy meta:\n%.600s", page)
	}
}

// TestOverlay: several runs share the charts, each in its own colour and
// named in the legend by its directory; a headline of another measure
// (an Offline run's samples/s beside Server's completed samples/s) gets a
// row of its own.
func TestOverlay(t *testing.T) {
	offline := copyRun(t, "server1500")
	editResult(t, offline, func(m map[string]any) {
		m["metric"] = map[string]any{"name": "Samples per second", "value": 15216.67, "unit": "samples/s"}
	})
	page := render(t, copyRun(t, "server500"), copyRun(t, "server1500"), offline)
	var rows [][]string // label, then the three cells' text
	for _, m := range regexp.MustCompile(`<tr><td class="l">([^<]*)</td><td class="l">samples/s</td>((?:<td[^>]*>[^<]*</td>){3})</tr>`).FindAllStringSubmatch(page, -1) {
		row := []string{m[1]}
		for _, c := range regexp.MustCompile(`<td[^>]*>([^<]*)</td>`).FindAllStringSubmatch(m[2], -1) {
			row = append(row, c[1])
		}
		rows = append(rows, row)
	}
	if len(rows) < 2 || !slices.Equal(rows[0], []string{"Completed samples per second", "500.98", "1511.77", "–"}) ||
		!slices.Equal(rows[1], []string{"Samples per second", "–", "–", "15216.67"}) {
		t.Errorf("metric rows: %q", rows)
	}
	for _, name := range []string{"server500", "server1500"} {
		if !strings.Contains(page, `<li data-run="`+name+`">`) {
			t.Errorf("%s not in the legend", name)
		}
	}
	spectrum := chartSVG(t, page, "spectrum")
	for _, col := range []string{"#0072B2", "#D55E00"} {
		if !strings.Contains(spectrum, `<polyline fill="none" stroke="`+col+`"`) {
			t.Errorf("spectrum: no line in %s", col)
		}
	}
	if n := strings.Count(spectrum, "<circle"); n != 18 {
		t.Errorf("spectrum: %d dots for result.json's percentiles, want 3 runs × 6", n)
	}
}

func chartSVG(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<svg class="chart" data-chart="` + id + `".*?</svg>`).FindString(page)
	if m == "" {
		t.Fatalf("no %s chart", id)
	}
	return m
}

// TestInvalidRun: an INVALID run shows its verdict, each unmet criterion
// beside LoadGen's advice, its warnings, and a percentile that fell on a
// failed sample as "failed", all as result.json has them.
func TestInvalidRun(t *testing.T) {
	dir := copyRun(t, "server500")
	editResult(t, dir, func(m map[string]any) {
		m["result_validity"], m["valid"] = "INVALID", false
		m["invalid_reasons"] = []string{"latency constraint not met", "no failed samples not met"}
		m["recommendations"] = []string{"Reduce target QPS (--target-qps)", "Fix the failures"}
		m["warnings"] = []string{"generator bound: issue lateness p99 12.7 ms is 25% of the bound"}
		m["samples_failed"] = 100
		m["sample_latency"].(map[string]any)["percentiles"].([]any)[5].(map[string]any)["latency_ns"] = json.Number("9223372036854775807")
	})
	res := readJSON(t, filepath.Join(dir, "result.json"))
	page := render(t, dir)
	checkFigures(t, page, "server500", res, "sample_latency.p99.9")
	if v, text, _ := verdictShown(page, "server500"); v != "INVALID" || text != "INVALID" {
		t.Errorf("verdict %q %q", v, text)
	}
	if !strings.Contains(page, `data-figure="sample_latency.p99.9" data-value="9223372036854775807">failed<`) {
		t.Error("p99.9 on a failed sample is not shown as failed")
	}
	for _, want := range []string{
		`<td class="l" data-reason="latency constraint not met">latency constraint not met</td><td class="l">Reduce target QPS (--target-qps)</td>`,
		`<td class="l" data-reason="no failed samples not met">no failed samples not met</td><td class="l">Fix the failures</td>`,
		`warning: generator bound: issue lateness p99 12.7 ms is 25% of the bound`,
		`100 samples failed; this result.json has no breakdown by kind.`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("no %s", want)
		}
	}
}

// TestTimeSeriesAndFailures: timeseries.json gives the charts over time and
// the lateness chart; result.json's failures give a row per kind.
func TestTimeSeriesAndFailures(t *testing.T) {
	dir := copyRun(t, "server500")
	editResult(t, dir, func(m map[string]any) {
		m["samples_failed"] = 200
		m["failures"] = []map[string]any{
			{"outcome": "error", "status": "HTTP 500", "count": 190, "example": "internal error"},
			{"outcome": "unanswered", "status": "", "count": 10, "example": "no answer within the drain timeout"},
		}
	})
	page := render(t, dir)
	for _, id := range []string{"throughput", "latency-over-time", "lateness-over-time"} {
		svg := chartSVG(t, page, id)
		if !strings.Contains(svg, "<polyline") {
			t.Errorf("%s: no line", id)
		}
	}
	// Second 4 has no p50 (null): the p50 line breaks there (seconds 0-3
	// and 5-8), the p99 line does not.
	lat := chartSVG(t, page, "latency-over-time")
	var points []int
	for _, m := range regexp.MustCompile(`<polyline [^>]*points="([^"]*)"><title>server500 (p50|p99)</title>`).FindAllStringSubmatch(lat, -1) {
		points = append(points, strings.Count(m[1], ","))
	}
	if !slices.Equal(points, []int{9, 4, 4}) {
		t.Errorf("p99 and p50 lines of %v points, want [9 4 4]", points)
	}
	rows := regexp.MustCompile(`<tr data-failure="([^"]*)"><td class="l">[^<]*</td><td class="l">([^<]*)</td><td data-value="(\d+)">`).FindAllStringSubmatch(page, -1)
	if len(rows) != 2 || rows[0][1] != "error" || rows[0][2] != "HTTP 500" || rows[0][3] != "190" || rows[1][1] != "unanswered" || rows[1][3] != "10" {
		t.Errorf("failure rows: %q", rows)
	}
}

// TestHlogFallback: without timeseries.json the charts over time come from
// latency.hlog's intervals, and the page says so.
func TestHlogFallback(t *testing.T) {
	dir := copyRun(t, "server1500")
	page := render(t, dir)
	tput := chartSVG(t, page, "throughput")
	if !strings.Contains(tput, "by issue second (latency.hlog)") {
		t.Errorf("throughput: not drawn from the hlog:\n%s", tput)
	}
	if strings.Contains(page, `data-chart="lateness-over-time"`) {
		t.Error("a lateness chart without lateness data")
	}
	if !strings.Contains(page, "server1500: no timeseries.json; drawn from latency.hlog") {
		t.Error("no note that the series come from latency.hlog")
	}
}

// TestSearchTrials: a search's directory (search.json, no result.json when
// no peak was found) gives the trials table and charts.
func TestSearchTrials(t *testing.T) {
	dir := copyRun(t, "peak")
	sj := readJSON(t, filepath.Join(dir, "search.json"))
	trials := sj["trials"].([]any)
	page := render(t, dir)
	rows := regexp.MustCompile(`<tr data-trial="(\d+)"><td>\d+</td><td class="l">[^<]*</td><td data-value="([^"]*)">[^<]*</td><td data-value="([^"]*)">`).FindAllStringSubmatch(page, -1)
	if len(rows) != len(trials) {
		t.Fatalf("%d trial rows, search.json has %d", len(rows), len(trials))
	}
	for i, r := range rows {
		tr := trials[i].(map[string]any)
		if r[1] != tr["index"].(json.Number).String() || !sameNumber(r[2], tr["target"]) || !sameNumber(r[3], tr["achieved"]) {
			t.Errorf("row %d: %q, search.json %v", i, r[1:], tr)
		}
	}
	if !strings.Contains(page, "no peak found") {
		t.Error("the verdict does not say no peak was found")
	}
	for _, id := range []string{"trials-achieved", "trials-tail"} {
		if n := strings.Count(chartSVG(t, page, id), "<circle"); n != len(trials) {
			t.Errorf("%s: %d dots, want %d", id, n, len(trials))
		}
	}
}

func sameNumber(s string, v any) bool {
	a, err := json.Number(s).Float64()
	b, err2 := v.(json.Number).Float64()
	return err == nil && err2 == nil && a == b
}

// TestMissingFiles: a run with result.json alone renders, its missing
// sections named; a search without result.json renders its trials alone.
func TestMissingFiles(t *testing.T) {
	dir := copyRun(t, "server500")
	for _, f := range []string{"latency.hlog", "timeseries.json"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	page := render(t, dir)
	for _, want := range []string{"no latency.hlog: the percentile spectrum is left out", "no timeseries.json: the charts over time are left out",
		"No run has a latency.hlog with completed samples.", "No run has a timeseries.json."} {
		if !strings.Contains(page, want) {
			t.Errorf("no note %q", want)
		}
	}
	if strings.Contains(page, `<svg class="chart"`) {
		t.Error("a chart without data")
	}
}

// TestLoadErrors: bad input is an error naming the file (or saying the
// directory is no run), never a panic.
func TestLoadErrors(t *testing.T) {
	for _, c := range []struct {
		name, file, content, want string
		is                        error
	}{
		{"empty dir", "", "", "it has no result.json or search.json", report.ErrNoRun},
		{"corrupt result", "result.json", `{"scenario": "Server", `, "result.json: ", nil},
		{"result not an object", "result.json", `[1,2]`, "result.json: ", nil},
		{"result without scenario", "result.json", `{}`, "result.json: ", nil},
		// failures is part of result.json: read by runlog's one decoder, a
		// malformed failures key makes the file malformed, naming the key.
		{"bad failures", "result.json", `{"scenario":"Server","failures":{"a":1}}`, "result.json: runlog: malformed result.json: ", runlog.ErrMalformedResult},
		{"bad failure count", "result.json", `{"scenario":"Server","failures":[{"outcome":"error","count":"x"}]}`, "result.json: runlog: malformed result.json: ", runlog.ErrMalformedResult},
		{"corrupt search", "search.json", `{"trials": [}`, "search.json: ", nil},
		{"corrupt timeseries", "timeseries.json", `{"interval_ns": 1e9, "seconds": [{"second": "x"}]}`, "timeseries.json: ", runlog.ErrMalformedTimeseries},
		{"timeseries backwards", "timeseries.json", `{"interval_ns": 1000000000, "seconds": [{"second": 2}, {"second": 1}]}`, "timeseries.json: runlog: malformed timeseries.json: seconds[1]: second 1 does not follow 2", runlog.ErrMalformedTimeseries},
		{"timeseries no interval", "timeseries.json", `{"seconds": []}`, "timeseries.json: runlog: malformed timeseries.json: interval_ns 0", runlog.ErrMalformedTimeseries},
		{"timeseries trailing data", "timeseries.json", `{"interval_ns": 1000000000, "seconds": []} {}`, "timeseries.json: ", runlog.ErrMalformedTimeseries},
		{"hlog garbage", "latency.hlog", "not a log\n", "latency.hlog: not an HdrHistogram log", nil},
		{"hlog bad payload", "latency.hlog", "0.0,1.0,1.0,HISTFAAAAB3not-base64!!\n", "latency.hlog: not an HdrHistogram log", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.file != "" && c.file != "result.json" {
				dir = copyRun(t, "server500")
			}
			if c.file != "" {
				if err := os.WriteFile(filepath.Join(dir, c.file), []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r, err := report.Load("x", report.Dir(dir))
			if err == nil || !strings.Contains(err.Error(), c.want) || r != nil {
				t.Fatalf("Load: %v, %v; want an error with %q", r, err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v is not %v", err, c.is)
			}
			if strings.HasPrefix(c.name, "bad failure") && !strings.Contains(err.Error(), "failures") {
				t.Errorf("%v does not name the failures key", err)
			}
		})
	}
	if err := report.Write(&bytes.Buffer{}, nil, report.Options{}); err == nil {
		t.Error("Write of no runs: no error")
	}
}

// TestSpectrumFromHlog: the spectrum drawn is the hlog's: its points are
// the histogram's percentiles, up to the maximum.
func TestSpectrumFromHlog(t *testing.T) {
	h := stats.NewHistogram()
	for v := int64(1); v <= 10000; v++ {
		if err := h.RecordValue(v * 1000); err != nil { // 1 µs to 10 ms
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := stats.WriteIntervalLog(&b, time.Unix(1700000000, 0), "test", []stats.LogInterval{{Length: time.Second, Histogram: h}}); err != nil {
		t.Fatal(err)
	}
	dir := copyRun(t, "server500")
	if err := os.WriteFile(filepath.Join(dir, "latency.hlog"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := report.Load("x", report.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	s := r.Spectrum
	if s.Count != 10000 || s.MaxNs < 10_000_000 || s.MaxNs > 10_010_000 {
		t.Fatalf("count %d max %d", s.Count, s.MaxNs)
	}
	last := s.Points[len(s.Points)-1]
	if last.Ns != s.MaxNs || last.P != 1-1.0/10000 {
		t.Errorf("last point %+v, want the max at 1-1/n", last)
	}
	for _, p := range s.Points {
		want := p.P * 10_000_000
		if p.P < 0.9999 && (float64(p.Ns) < want-1000 || float64(p.Ns) > want*1.001+1000) {
			t.Errorf("p%.5f: %d ns, want about %.0f", p.P*100, p.Ns, want)
		}
	}
	if len(s.Points) != 81 { // log10(10000)/0.05 steps, and the max
		t.Errorf("%d points", len(s.Points))
	}
}

// TestClosedLoop: a real closed-loop run (loadgend run --concurrency 8) is
// N/A, not INVALID: the page says so with its concurrency, shows its
// closed-loop figures as result.json has them, and no issue lateness (a
// closed loop has no schedule to be late for).
func TestClosedLoop(t *testing.T) {
	dir := copyRun(t, "closed8")
	res := readJSON(t, filepath.Join(dir, "result.json"))
	page := render(t, dir)
	v, text, ok := verdictShown(page, "closed8")
	if !ok || v != "N/A" || v != res["result_validity"] || text != "N/A (closed loop, concurrency 8)" {
		t.Errorf("verdict %q %q (%v), result.json %v", v, text, ok, res["result_validity"])
	}
	sec := regexp.MustCompile(`(?s)<section class="run" data-run="closed8">.*?</section>`).FindString(page)
	if strings.Contains(sec, "INVALID") || strings.Contains(sec, `class="VALID"`) || !strings.Contains(sec, "not an MLPerf scenario") {
		t.Errorf("the closed loop's verdict section:\n%s", sec)
	}
	checkFigures(t, page, "closed8", res, "metric.value", "closed_loop.concurrency", "closed_loop.max_outstanding", "sample_latency.p99")
	for _, f := range shownFigures(page) {
		if strings.HasPrefix(f.Key, "issue_lateness.") {
			t.Errorf("a closed loop shows %s", f.Key)
		}
	}
	for _, want := range []string{"n/a: a closed loop has no schedule to be late for", "closed8: a closed-loop run writes no timeseries.json"} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q", want)
		}
	}
}

// TestSweep: a real sweep's search.json (loadgend run --mode sweep --rates
// 500,1000,2000,3000,4000) shows as a sweep, not a search that found no
// peak: its latency-vs-load table equals search.json's trials, and the
// latency chart draws p50 and p90 by rate beside the tail dots.
func TestSweep(t *testing.T) {
	dir := copyRun(t, "sweep")
	sj := readJSON(t, filepath.Join(dir, "search.json"))
	trials := sj["trials"].([]any)
	page := render(t, dir)
	if strings.Contains(page, "no peak found") || strings.Contains(page, "No peak found") || !strings.Contains(page, "<span>sweep of 5 rates</span>") {
		t.Error("the sweep is not shown as one")
	}
	for _, k := range []string{"lower", "upper"} {
		if !strings.Contains(page, `data-figure="search.`+k+`" data-value="`+sj[k].(json.Number).String()+`"`) {
			t.Errorf("search.json's %s not shown", k)
		}
	}
	rows := regexp.MustCompile(`<tr data-trial="(\d+)">(?:<td[^>]*>[^<]*</td>){6}<td data-value="([^"]*)">[^<]*</td><td data-value="([^"]*)">[^<]*</td><td data-value="([^"]*)">[^<]*</td><td data-value="(\d+)">`).FindAllStringSubmatch(page, -1)
	if len(rows) != len(trials) || len(rows) != 5 {
		t.Fatalf("%d latency-vs-load rows, search.json has %d trials", len(rows), len(trials))
	}
	for i, r := range rows {
		tr := trials[i].(map[string]any)
		l := tr["latency_ms"].(map[string]any)
		if r[1] != tr["index"].(json.Number).String() || !sameNumber(r[2], l["p50"]) || !sameNumber(r[3], l["p90"]) || !sameNumber(r[4], l["p99"]) ||
			r[5] != tr["over_bound_samples"].(json.Number).String() {
			t.Errorf("row %d: %q, search.json %v", i, r[1:], tr)
		}
	}
	if strings.Contains(page, `id="lateness-table"`) || !strings.Contains(page, "No run has a result.json (a search keeps each trial") ||
		!strings.Contains(page, "a sweep's p50 is dashed and its p90 dotted") {
		t.Error("a sweep alone: an empty lateness table, or no note for the sections it has no data for")
	}
	tail := chartSVG(t, page, "trials-tail")
	if !strings.Contains(tail, "Sweep: latency vs rate asked") {
		t.Error("the latency chart is not titled as a sweep's")
	}
	for _, p := range []string{"p50", "p90"} {
		m := regexp.MustCompile(`<polyline [^>]*points="([^"]*)"><title>sweep ` + p + `</title>`).FindStringSubmatch(tail)
		if m == nil || strings.Count(m[1], ",") != len(trials) {
			t.Errorf("%s line: %q, want %d points", p, m, len(trials))
		}
	}
}

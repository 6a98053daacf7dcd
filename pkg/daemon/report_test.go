package daemon

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// TestRunReport: GET /v1/runs/{id}/report.html serves a finished run's
// report as HTML under the page's own policy, its figures result.json's and
// its charts over time drawn from the run's timeseries.json (not the
// latency.hlog fallback); 409 while a run is not finished, 404 for an
// unknown run.
func TestRunReport(t *testing.T) {
	sut := startSUT(t)
	_, base := startDaemon(t, nil)
	target := "http://" + sut.HTTPAddr()

	// Over two seconds: a time series of more than one point.
	_, b := do(t, "POST", base+"/v1/runs", specFor(target, 2600, ""))
	var done struct{ ID string }
	json.Unmarshal(b, &done)
	waitState(t, base, done.ID)
	_, b = do(t, "GET", base+"/v1/runs/"+done.ID+"/result", "")
	var res struct {
		Validity         string `json:"result_validity"`
		SamplesCompleted int64  `json:"samples_completed"`
		DurationNs       int64  `json:"duration_ns"`
		Metric           struct {
			Value float64 `json:"value"`
		} `json:"metric"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	resp, page := send(t, "GET", base+"/v1/runs/"+done.ID+"/report.html", "", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		resp.Header.Get("Content-Security-Policy") != reportPolicy {
		t.Fatalf("report: %d %v", resp.StatusCode, resp.Header)
	}
	for _, want := range []string{
		`data-figure="result_validity" data-value="` + res.Validity + `"`,
		`data-run="` + done.ID + `" data-figure="metric.value" data-value="` + strconv.FormatFloat(res.Metric.Value, 'g', -1, 64) + `"`,
		`<svg class="chart" data-chart="spectrum"`,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report has no %s", want)
		}
	}
	// The series the page draws is the run's timeseries.json: a point a
	// second of it, issued and lateness lines that latency.hlog has not.
	code, b := do(t, "GET", base+"/v1/runs/"+done.ID+"/files/"+runlog.TimeseriesJSONFile, "")
	if code != 200 {
		t.Fatalf("timeseries.json: %d %s", code, b)
	}
	ts, err := runlog.DecodeTimeseries(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var completed int64
	for _, s := range ts.Seconds {
		completed += s.Completed
	}
	if len(ts.Seconds) < 2 || completed != res.SamplesCompleted {
		t.Fatalf("timeseries.json: %d seconds, %d completed; result.json %d", len(ts.Seconds), completed, res.SamplesCompleted)
	}
	// A rate a second; a last second the run covered less than half of
	// has none.
	rates := len(ts.Seconds)
	if res.DurationNs-int64(rates-1)*ts.IntervalNs < ts.IntervalNs/2 {
		rates--
	}
	for _, line := range []string{"issued/s", "completed/s", "failed/s"} {
		m := regexp.MustCompile(`<polyline [^>]*points="([^"]*)"><title>` + done.ID + " " + line + `</title>`).FindStringSubmatch(string(page))
		if m == nil || strings.Count(m[1], ",") != rates {
			t.Errorf("throughput: %s line %q, want %d points", line, m, rates)
		}
	}
	if !strings.Contains(string(page), `<svg class="chart" data-chart="lateness-over-time"`) || strings.Contains(string(page), "by issue second (latency.hlog)") ||
		strings.Contains(string(page), "drawn from latency.hlog") {
		t.Error("the charts over time are not drawn from timeseries.json")
	}
	if resp, body := send(t, "HEAD", base+"/v1/runs/"+done.ID+"/report.html", "", nil); resp.StatusCode != 200 || len(body) != 0 {
		t.Errorf("HEAD: %d, %d bytes", resp.StatusCode, len(body))
	}

	// A long run, queued or running: no report until it ends.
	_, b = do(t, "POST", base+"/v1/runs", specFor(target, 60000, ""))
	var long struct{ ID string }
	json.Unmarshal(b, &long)
	if code, b := do(t, "GET", base+"/v1/runs/"+long.ID+"/report.html", ""); code != http.StatusConflict || !strings.Contains(string(b), "not_finished") {
		t.Errorf("report of an unfinished run: %d %s", code, b)
	}
	do(t, "POST", base+"/v1/runs/"+long.ID+"/cancel", "")
	waitState(t, base, long.ID)

	// A run that failed before it began has nothing to report on.
	_, b = do(t, "POST", base+"/v1/runs", spec("http://127.0.0.1:1", ""))
	var failed struct{ ID string }
	json.Unmarshal(b, &failed)
	if st := waitState(t, base, failed.ID); st.State != "failed" {
		t.Fatalf("run against a closed port: %s", st.State)
	}
	if code, b := do(t, "GET", base+"/v1/runs/"+failed.ID+"/report.html", ""); code != http.StatusNotFound || !strings.Contains(string(b), "no result.json or search.json") {
		t.Errorf("report of a failed run: %d %s", code, b)
	}
	if code, _ := do(t, "GET", base+"/v1/runs/nope/report.html", ""); code != http.StatusNotFound {
		t.Errorf("unknown run: %d", code)
	}
}

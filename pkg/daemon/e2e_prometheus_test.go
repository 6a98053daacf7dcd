package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/internal/testtool"
)

// A real Prometheus server scraping loadgend every second sees, during a
// Server run, a completion rate within 10% of the run's, and afterwards a
// latency histogram whose count is the run's completed samples. Two servers
// scrape at once: one as Debian ships it (text format, classic buckets) and
// one with native histograms (protobuf, the native form only).
func TestE2EPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 s run under two Prometheus servers")
	}
	bin := testtool.Need(t, "prometheus")
	const qps = 300
	target := e2eSUT(t)
	svc, c := e2eService(t, nil)

	proms := []struct {
		name  string
		args  []string
		count string // the latency histogram's sample count
	}{
		{"classic", nil, "loadgend_sample_latency_seconds_count"},
		{"native", []string{"--enable-feature=native-histograms"}, "histogram_count(loadgend_sample_latency_seconds)"},
	}
	bases := make([]string, len(proms))
	for i, p := range proms {
		bases[i] = testtool.StartPrometheus(t, bin, svc.Addr(), p.args...)
	}
	for i, p := range proms {
		waitQuery(t, bases[i], `up{job="loadgend"}`, 20*time.Second, func(v, _ float64) bool { return v == 1 },
			p.name+": loadgend scraped")
	}

	// 10 s at 300/s: a 5 s window (four or five 1 s scrapes) holds about
	// 1200 completions, so Poisson arrivals alone move the rate by ≈3%
	// (one sigma); 10% is over three.
	// The early verdict off: on a loaded machine the run may go INVALID,
	// and stopped early it would leave no 6–9.5 s window to read.
	spec := strings.Replace(serverSpec(target, qps, 10000), `"settings":{`, `"settings":{"early_verdict":false,`, 1)
	id := c.submit(t, spec)
	type reading struct {
		prom    string
		elapsed float64
		rate    float64
	}
	var readings []reading
	last := 0.0
	err := c.watch(t, id, 60*time.Second, func(event string, data []byte) bool {
		switch event {
		case api.EventState:
			var ev api.StateEvent
			return json.Unmarshal(data, &ev) == nil && ev.State.Terminal()
		case api.EventProgress:
			var p api.Progress
			// From 6 s on, the 5 s window lies inside the run; stop short
			// of the 10 s end.
			if json.Unmarshal(data, &p) != nil || p.ElapsedS < 6 || p.ElapsedS > 9.5 || p.ElapsedS-last < 1 {
				return false
			}
			last = p.ElapsedS
			for i, pr := range proms {
				v, _, ok := promQuery(t, bases[i], "rate(loadgend_samples_completed_total[5s])")
				if !ok {
					t.Errorf("%s at %.1f s: the rate query returned nothing", pr.name, p.ElapsedS)
					continue
				}
				readings = append(readings, reading{pr.name, p.ElapsedS, v})
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	st := c.status(t, id)
	if st.State != api.StateDone || st.EndedAt == nil {
		t.Fatalf("run ended %s (%s %s)", st.State, st.EndReason, st.Error)
	}
	code, b := c.do(t, http.MethodGet, "/v1/runs/"+id+"/result", "")
	var res struct {
		Completed int64   `json:"samples_completed"`
		Failed    int64   `json:"samples_failed"`
		Achieved  float64 `json:"result_completed_samples_per_sec"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &res) != nil || res.Completed == 0 {
		t.Fatalf("result: %d %s", code, b)
	}
	t.Logf("run: %d samples completed, %d failed, achieved %.1f/s (target %d/s)", res.Completed, res.Failed, res.Achieved, qps)

	if len(readings) < 2*len(proms) {
		t.Errorf("only %d rate readings during the run, want at least two per server", len(readings))
	}
	for _, r := range readings {
		t.Logf("%s at %.1f s: rate(loadgend_samples_completed_total[5s]) = %.1f/s", r.prom, r.elapsed, r.rate)
		for _, want := range []float64{qps, res.Achieved} {
			if math.Abs(r.rate-want) > 0.1*want {
				t.Errorf("%s at %.1f s: PromQL rate %.1f/s, more than 10%% from %.1f/s", r.prom, r.elapsed, r.rate, want)
			}
		}
	}

	// Counters only grow after the run's end is recorded, so the first
	// scrape that started after it has the final counts.
	end := float64(st.EndedAt.UnixNano()) / 1e9
	for i, p := range proms {
		waitQuery(t, bases[i], "timestamp(loadgend_samples_completed_total)", 10*time.Second,
			func(v, _ float64) bool { return v >= end }, p.name+": a scrape after the run ended")
		for _, q := range []string{p.count, "loadgend_samples_completed_total"} {
			v, _, ok := promQuery(t, bases[i], q)
			t.Logf("%s: %s = %v", p.name, q, v)
			if !ok || v != float64(res.Completed) {
				t.Errorf("%s: %s = %v (found %v), want the run's completed samples %d", p.name, q, v, ok, res.Completed)
			}
		}
	}
}

// promQuery evaluates an instant query now and returns the first series'
// value and timestamp; ok is false for an empty result.
func promQuery(t *testing.T, base, query string) (v, ts float64, ok bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/query?query="+url.QueryEscape(query), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("query %s: %v", query, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Status != "success" {
		t.Fatalf("query %s: %d %s", query, resp.StatusCode, b)
	}
	if out.Data.ResultType != "vector" || len(out.Data.Result) == 0 {
		return 0, 0, false
	}
	val := out.Data.Result[0].Value
	tsf, _ := val[0].(float64)
	s, _ := val[1].(string)
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		t.Fatalf("query %s: value %v: %v", query, val, err)
	}
	return f, tsf, true
}

// waitQuery polls query until ok holds for its value: Prometheus offers no
// event for "scraped".
func waitQuery(t *testing.T, base, query string, timeout time.Duration, ok func(v, ts float64) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var v float64
	for time.Now().Before(deadline) {
		var found bool
		var ts float64
		v, ts, found = promQuery(t, base, query)
		if found && ok(v, ts) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: %s = %v after %v", what, query, v, timeout)
}

package dashboards

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/pkg/daemon"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// TestDashboardQueriesReturnData evaluates every query of the dashboard,
// its template variables substituted as Grafana would, against two real
// Prometheus servers scraping an in-process loadgend every second while it
// runs a Server scenario against sutproxy (a tensor model's, then a
// simulated LLM's for the Tokens row): one as Debian ships it (classic
// buckets only) and one with native histograms (the native form only).
// Each query must parse and return a finite value on both; each side of a
// query's top-level "or" (native first, classic buckets second) must
// return data on at least one.
func TestDashboardQueriesReturnData(t *testing.T) {
	if testing.Short() {
		t.Skip("a Server run under two Prometheus servers")
	}
	bin := testtool.Need(t, "prometheus")
	qs, err := queries(loadDashboard(t, "loadgend.json"))
	if err != nil {
		t.Fatal(err)
	}

	sut, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "off"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sut.Close() })
	svc, err := daemon.New(daemon.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), MaxQPS: 10000,
		MaxDuration: time.Hour, MaxInflight: 1024, LogLevel: "warn", DrainTimeout: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := svc.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	servers := []struct{ name, base string }{
		{"classic", startPrometheus(t, bin, svc.Addr())},
		{"native", startPrometheus(t, bin, svc.Addr(), "--enable-feature=native-histograms")},
	}

	base := "http://" + svc.Addr()
	// Grafana escapes a regex variable's value for a double-quoted
	// PromQL string: a backslash before each metacharacter, itself escaped.
	grafanaRegex := func(v string) string { return strings.ReplaceAll(regexp.QuoteMeta(v), `\`, `\\`) }
	vars := strings.NewReplacer(
		"$__rate_interval", "4s", "$__range", "1m", "$job", grafanaRegex("loadgend"),
		"$instance", grafanaRegex(svc.Addr()))
	var tensor, generative []query
	for _, q := range qs {
		q.expr = vars.Replace(q.expr)
		if generativeOnly(q.expr) {
			generative = append(generative, q)
		} else {
			tensor = append(tensor, q)
		}
	}

	// A tensor model's run feeds every panel but the Tokens row; then a
	// simulated LLM's run (sutproxy's llm over generate_stream) feeds that
	// row. Each query is checked while its run goes.
	id := startRun(t, base, fmt.Sprintf(`{"target":"http://%s","model":"identity","scenario":"Server","settings":{"target_qps":300,"min_duration_ms":15000,"min_query_count":1,"target_latency_ms":100,"latency_percentile":0.99}}`, sut.HTTPAddr()))
	// From 7 s in, each server has scraped the run for several
	// $__rate_interval windows (substituted as 4 s below), and the run
	// still has 8 s to go, so loadgend_run_info is still there.
	waitElapsed(t, base, id, 7)
	checkQueries(t, servers, tensor)
	cancelRun(t, base, id)

	// Answers of 8 tokens 5 ms apart: TTFT, TPOT and ITL all have samples
	// in every 4 s window.
	id = startRun(t, base, fmt.Sprintf(`{"target":"http://%s","model":"llm","api":"generate-stream","input_tokens":"16","output_tokens":"8","scenario":"Server","settings":{"target_qps":50,"min_duration_ms":15000,"min_query_count":1,"target_latency_ms":1000,"latency_percentile":0.9}}`, sut.HTTPAddr()))
	waitElapsed(t, base, id, 7)
	checkQueries(t, servers, generative)
	cancelRun(t, base, id)
}

// startRun posts a run spec to loadgend and returns the run's id.
func startRun(t *testing.T, base, spec string) string {
	t.Helper()
	resp, err := http.Post(base+"/v1/runs", "application/json", strings.NewReader(spec))
	if err != nil {
		t.Fatal(err)
	}
	var created api.RunCreated
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &created) != nil {
		t.Fatalf("POST /v1/runs = %d %s", resp.StatusCode, b)
	}
	return created.ID
}

// cancelRun cancels a running run, so that the next one starts.
func cancelRun(t *testing.T, base, id string) {
	t.Helper()
	resp, err := http.Post(base+"/v1/runs/"+id+"/cancel", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/runs/%s/cancel = %d", id, resp.StatusCode)
	}
}

// checkQueries: each query returns finite values on both servers, and each
// side of a top-level "or" on at least one.
func checkQueries(t *testing.T, servers []struct{ name, base string }, qs []query) {
	t.Helper()
	for _, q := range qs {
		expr := q.expr
		for _, s := range servers {
			if n, err := finiteValues(t, s.base, expr); err != nil || n == 0 {
				t.Errorf("%s on %s Prometheus: %d finite values (%v)\n  %s", q.where, s.name, n, err, expr)
			}
		}
		parts := strings.Split(expr, " or ")
		for i, part := range parts {
			if len(parts) == 1 {
				break
			}
			total := 0
			for _, s := range servers {
				n, err := finiteValues(t, s.base, part)
				if err != nil {
					t.Errorf("%s, side %d of or on %s: %v", q.where, i+1, s.name, err)
				}
				total += n
			}
			if total == 0 {
				t.Errorf("%s: side %d of or returns no data on either server: %s", q.where, i+1, part)
			}
		}
	}
}

// generativeOnly says whether expr reads a metric only a generative run
// feeds (the Tokens row).
func generativeOnly(expr string) bool {
	for _, m := range []string{"loadgend_ttft_seconds", "loadgend_tpot_seconds", "loadgend_itl_seconds", "loadgend_output_tokens_total", "loadgend_input_tokens_total"} {
		if strings.Contains(expr, m) {
			return true
		}
	}
	return false
}

// waitElapsed follows the run's event stream until its progress reaches
// sec seconds.
func waitElapsed(t *testing.T, base, id string, sec float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/runs/"+id+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		switch event {
		case api.EventProgress:
			var p api.Progress
			if json.Unmarshal([]byte(data), &p) == nil && p.ElapsedS >= sec {
				return
			}
		case api.EventState:
			var ev api.StateEvent
			if json.Unmarshal([]byte(data), &ev) == nil && ev.State.Terminal() {
				t.Fatalf("run %s ended (%s) before %v s", id, ev.State, sec)
			}
		}
	}
	t.Fatalf("run %s: event stream ended before %v s: %v", id, sec, sc.Err())
}

// finiteValues runs expr as a range query over the last 5 s at 1 s steps,
// as a Grafana panel does, and counts the finite points. A parse error
// comes back as an error.
func finiteValues(t *testing.T, base, expr string) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	now := time.Now()
	q := url.Values{"query": {expr}, "start": {strconv.FormatInt(now.Add(-5*time.Second).Unix(), 10)},
		"end": {strconv.FormatInt(now.Unix(), 10)}, "step": {"1"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/query_range?"+q.Encode(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Values [][2]any `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return 0, fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	if out.Status != "success" {
		return 0, fmt.Errorf("%s", out.Error)
	}
	n := 0
	for _, r := range out.Data.Result {
		for _, v := range r.Values {
			s, _ := v[1].(string)
			if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				n++
			}
		}
	}
	return n, nil
}

// startPrometheus is testtool.StartPrometheus, returning once loadgend has
// been scraped once.
func startPrometheus(t *testing.T, bin, target string, args ...string) string {
	t.Helper()
	base := testtool.StartPrometheus(t, bin, target, args...)
	if err := waitFor(nil, 30*time.Second, func() bool {
		n, err := finiteValues(t, base, `up{job="loadgend"} == 1`)
		return err == nil && n > 0
	}); err != nil {
		t.Fatalf("prometheus %v: %v", args, err)
	}
	return base
}

// waitFor polls ok until it holds, the process exits or the timeout
// passes: neither Prometheus's readiness nor its first scrape has an event
// to wait on.
func waitFor(exited <-chan error, timeout time.Duration, ok func() bool) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("exited: %v", err)
		default:
		}
		if ok() {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("not ready and scraping after %v", timeout)
}

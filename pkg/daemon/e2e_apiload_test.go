package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/daemon"
)

// TestAPILoadDuringARun is issue 17 #5's benchmark (bench/apiload.sh; set
// NETLOADGEN_API_BENCH=1): loadgend as its own process over a data
// directory of 500 finished runs, sutproxy and the API's clients in this
// one, all on loopback. Runs of 1,000 QPS Server alternate without and with
// API load: 50 clients sharing 2,000 GET /v1/runs?limit=500 (a client told
// 503 waits the Retry-After). Each run's issue lateness p99 (result.json)
// is printed as a FIGURE line; the test fails when the median with load is
// 1 ms or more above the median without.
//
// NETLOADGEN_API_BENCH_PAIRS (default 3) and NETLOADGEN_API_BENCH_SECONDS
// (default 15) size it; LOADGEND_API_CONCURRENCY is passed to loadgend.
func TestAPILoadDuringARun(t *testing.T) {
	if os.Getenv("NETLOADGEN_API_BENCH") == "" {
		t.Skip("a benchmark of a few minutes: set NETLOADGEN_API_BENCH=1 (bench/apiload.sh)")
	}
	pairs, seconds := envInt(t, "NETLOADGEN_API_BENCH_PAIRS", 3), envInt(t, "NETLOADGEN_API_BENCH_SECONDS", 15)
	target := e2eSUT(t)
	data := filepath.Join(t.TempDir(), "data")
	p := startLoadgend(t, "LOADGEND_DATA_DIR="+data)
	if st := p.client.waitEnded(t, p.client.submit(t, serverSpec(target, 1000, 1000)), time.Minute); st.State != api.StateDone {
		t.Fatalf("the seed run ended %s: %s", st.State, st.Error)
	}
	if err := p.signal(t, syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	daemon.SeedRuns(t, data, 499)
	env := []string{"LOADGEND_DATA_DIR=" + data}
	if v := os.Getenv("LOADGEND_API_CONCURRENCY"); v != "" {
		env = append(env, "LOADGEND_API_CONCURRENCY="+v) // childEnv passes no LOADGEND_*
	}
	p = startLoadgend(t, env...)

	var without, with []float64
	for i := range pairs {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		for _, load := range order {
			r := apiLoadRun(t, p.client, target, seconds, load)
			t.Logf("FIGURE pair %d api_load=%v lateness_p99_ms=%.3f lateness_max_ms=%.3f validity=%s lists_served=%d lists_refused_503=%d list_ms_p50=%.1f list_ms_max=%.1f",
				i+1, load, r.p99, r.max, r.validity, r.served, r.refused, r.listP50, r.listMax)
			if load {
				with = append(with, r.p99)
			} else {
				without = append(without, r.p99)
			}
		}
	}
	mw, ml := median(without), median(with)
	t.Logf("FIGURE median lateness p99: %.3f ms without API load, %.3f ms with (%+.3f ms)", mw, ml, ml-mw)
	if ml-mw >= 1 {
		t.Errorf("the API load moved the issue lateness p99 by %+.3f ms (medians %.3f -> %.3f), want under 1 ms", ml-mw, mw, ml)
	}
}

type apiLoadResult struct {
	p99, max         float64 // issue lateness, ms
	validity         string
	served, refused  int64
	listP50, listMax float64 // list request times, ms
}

// apiLoadRun runs one 1,000 QPS Server run for seconds, with the list load
// while it issues when load is set.
func apiLoadRun(t *testing.T, c e2eClient, target string, seconds int, load bool) apiLoadResult {
	t.Helper()
	id := c.submit(t, serverSpec(target, 1000, seconds*1000))
	c.waitProgress(t, id, time.Minute, func(p api.Progress) bool { return p.Issued > 0 })
	var r apiLoadResult
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var times []float64
	if load {
		const clients, total = 50, 2000
		var left atomic.Int64
		left.Store(total)
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
		for range clients {
			wg.Go(func() {
				for ctx.Err() == nil && left.Add(-1) >= 0 {
					start := time.Now()
					code, wait := listOnce(ctx, hc, c)
					switch {
					case code == http.StatusOK:
						atomic.AddInt64(&r.served, 1)
						mu.Lock()
						times = append(times, float64(time.Since(start))/1e6)
						mu.Unlock()
					case code == http.StatusServiceUnavailable:
						atomic.AddInt64(&r.refused, 1)
						left.Add(1) // refused: not one of the 2,000
						select {
						case <-ctx.Done():
						case <-time.After(wait):
						}
					}
				}
			})
		}
	}
	st := c.waitEnded(t, id, time.Duration(seconds)*time.Second+2*time.Minute)
	stop()
	wg.Wait()
	if st.State != api.StateDone {
		t.Fatalf("run %s ended %s: %s", id, st.State, st.Error)
	}
	code, b := c.do(t, http.MethodGet, "/v1/runs/"+id+"/result", "")
	var res struct {
		Validity string `json:"result_validity"`
		Lateness struct {
			MaxNs       int64 `json:"max_ns"`
			Percentiles []struct {
				P         float64 `json:"p"`
				LatencyNs int64   `json:"latency_ns"`
			} `json:"percentiles"`
		} `json:"issue_lateness"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &res) != nil {
		t.Fatalf("result of %s: %d %.200s", id, code, b)
	}
	r.validity, r.max = res.Validity, float64(res.Lateness.MaxNs)/1e6
	r.p99 = -1
	for _, p := range res.Lateness.Percentiles {
		if p.P == 0.99 {
			r.p99 = float64(p.LatencyNs) / 1e6
		}
	}
	slices.Sort(times)
	if len(times) > 0 {
		r.listP50, r.listMax = times[len(times)/2], times[len(times)-1]
	}
	return r
}

// listOnce is one GET /v1/runs?limit=500, read to the end; for a 503, the
// wait its Retry-After asks.
func listOnce(ctx context.Context, hc *http.Client, c e2eClient) (int, time.Duration) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/runs?limit=500", nil)
	if err != nil {
		return 0, 0
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	wait := time.Second
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		wait = time.Duration(s) * time.Second
	}
	return resp.StatusCode, wait
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

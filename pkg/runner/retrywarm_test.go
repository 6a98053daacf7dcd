package runner

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// coldFront is a server with a cold start: in front of a fast sutproxy
// model, it holds each inference request that arrives within window of
// the first one for hold, then answers at the model's law.
func coldFront(t *testing.T, window, hold time.Duration) string {
	t.Helper()
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:100us,instances=4")
	up, err := url.Parse(targetOf(p, "http"))
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(up)
	// Keep the upstream connections: the default two idle ones per host
	// would open a connection for most requests, a latency of its own.
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	t.Cleanup(tr.CloseIdleConnections)
	rp.Transport = tr
	var once sync.Once
	var first time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/infer") {
			now := time.Now()
			once.Do(func() { first = now })
			if now.Sub(first) < window {
				// The server's cold start, not the test's wait.
				select {
				case <-time.After(hold):
				case <-r.Context().Done():
					return
				}
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// coldSearch is a loadgen6 search from 100 QPS, capped at 200, of trials
// of 3 s with a 250 ms p99 bound, against a server whose requests in
// the 200 ms from its first take 600 ms (the pool client: a connection
// per request in flight, so a held request holds up no other). The bound is far above the model's law, so that a
// loaded machine's stalls (a proxy in between, the race detector) fail no
// trial; the cold requests fail the first within its first second, a
// third of its length: early.
func coldSearch(t *testing.T, warmupMs uint64, retries int) *search.Result {
	t.Helper()
	s := serverSettings(t, loadgen.RulesetLoadGen6, 3000)
	s.ServerTargetLatencyNs, s.ServerTargetQPS = 250e6, 100
	s.ServerFindPeakQPSBoundaryStepSize = 1
	base := Spec{Target: coldFront(t, 200*time.Millisecond, 600*time.Millisecond), Model: "m", Settings: s, TotalSamples: 64, PerformanceSamples: 64,
		HTTPClient: "pool",
		OutDir:     t.TempDir()}
	res, err := FindPeak(t.Context(), base, Search{Options: search.Options{Upper: 200, Precision: 50}, EarlyVerdict: true,
		TrialWarmupMs: &warmupMs, RetryFailed: retries}, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// No transient decides (issue 33): the cold start fails the first trial
// within its first moments. Without warm-up or retry it ends the search
// with no peak; a retry runs the trial again, past the cold start, and
// the search finds the server's peak; a warm-up spends the cold start
// before the first trial's clock, and no trial fails.
func TestColdStartRetriedOrWarmedUp(t *testing.T) {
	t.Run("neither", func(t *testing.T) {
		res := coldSearch(t, 0, 0)
		if res.Found || len(res.Trials) != 1 || res.Trials[0].EarlyVerdict == "" {
			t.Fatalf("found %v after %d trials (%s): want the cold first trial stopped early, ending the search", res.Found, len(res.Trials), res.EndReason)
		}
	})
	t.Run("retry", func(t *testing.T) {
		res := coldSearch(t, 0, 1)
		if !res.Found || res.Peak != 200 {
			t.Fatalf("peak %v (found %v, %s), want 200; trials %+v", res.Peak, res.Found, res.EndReason, res.Trials)
		}
		first, again := res.Trials[0], res.Trials[1]
		if first.Pass || first.RetriedAs != 2 || again.RetryOf != 1 || !again.Pass || again.Target != first.Target {
			t.Errorf("trials 1 and 2: %+v / %+v; want 1 failed, run again as 2, which passed", first, again)
		}
		if !strings.Contains(search.Summary(res), "the retry changed the outcome") {
			t.Errorf("summary:\n%s", search.Summary(res))
		}
	})
	t.Run("warm-up", func(t *testing.T) {
		res := coldSearch(t, 500, 0)
		if !res.Found || res.Peak != 200 || !res.Trials[0].Pass {
			t.Fatalf("peak %v (found %v, %s), want 200 with the first trial passing; trials %+v", res.Peak, res.Found, res.EndReason, res.Trials)
		}
		if res.TrialWarmupMs != 500 {
			t.Errorf("search.json trial_warmup_ms %d, want 500", res.TrialWarmupMs)
		}
	})
}

// Each trial's warm-up is its own, at its own rate: result.json of every
// trial counts one, and none with the warm-up off.
func TestTrialWarmupPerTrial(t *testing.T) {
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:100us,instances=4")
	for _, warm := range []uint64{0, 200} {
		s := serverSettings(t, loadgen.RulesetLoadGen6, 300)
		s.ServerTargetLatencyNs = 50e6
		dir := t.TempDir()
		base := Spec{Target: targetOf(p, "http"), Model: "m", Settings: s, TotalSamples: 64, PerformanceSamples: 64, OutDir: dir}
		res, err := FindPeak(t.Context(), base, Search{Rates: []float64{100, 400}, TrialWarmupMs: &warm}, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range res.Trials {
			b, err := os.ReadFile(filepath.Join(dir, tr.Dir, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			var r loadgen.Result
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			switch {
			case warm == 0 && r.Warmup != nil:
				t.Errorf("trial %d warmed up %+v with the warm-up off", tr.Index, r.Warmup)
			case warm > 0 && (r.Warmup == nil || r.Warmup.DurationMs != warm || r.Warmup.SamplesIssued == 0):
				t.Errorf("trial %d warm-up %+v, want %d ms", tr.Index, r.Warmup, warm)
			case warm > 0 && float64(r.Warmup.SamplesIssued) > tr.Target*float64(warm)/1000*2:
				// Poisson at the trial's rate: about rate × duration.
				t.Errorf("trial %d at %v QPS warmed up with %d samples in %d ms: not its own rate", tr.Index, tr.Target, r.Warmup.SamplesIssued, warm)
			}
		}
	}
}

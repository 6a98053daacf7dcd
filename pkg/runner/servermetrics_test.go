package runner

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// Acceptance (issue 30): sutproxy's request counter for the infer route
// grows over the run by exactly the samples the run issued, the warm-up's
// requests and the probe's not counted; the default endpoint, the
// target's own /metrics, is found at the probe; the file has every scrape.
func TestServerMetricsCounterDeltaIsSamplesIssued(t *testing.T) {
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:200us,instances=2")
	s := serverSettings(t, loadgen.RulesetLoadGen6, 600)
	s.ServerTargetQPS, s.MinQueryCount = 400, 200
	s.Engine.WarmupMs = 100
	var latest func() []serverview.LiveValue
	dir := t.TempDir()
	spec := Spec{Target: targetOf(p, "http"), Model: "m", Settings: s, TotalSamples: 64, PerformanceSamples: 64, OutDir: dir,
		ServerMetrics: ServerMetrics{Interval: 200 * time.Millisecond}}
	out, err := Run(t.Context(), spec, Options{Scraping: func(l func() []serverview.LiveValue) { latest = l }})
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result
	m := res.ServerMetrics
	if m == nil || len(m.Endpoints) != 1 || m.Endpoints[0].Scrapes < 3 {
		t.Fatalf("server metrics %+v: want the target's /metrics scraped 3+ times", m)
	}
	if res.Warmup == nil || res.Warmup.SamplesCompleted == 0 {
		t.Fatalf("warm-up %+v: the test wants one, so that it is shown not counted", res.Warmup)
	}
	var infer *serverview.Series
	for i, se := range m.Series {
		if se.Name == "sutproxy_requests_total" && se.Labels["route"] == server.RouteInfer && se.Labels["code"] == "200" {
			infer = &m.Series[i]
		}
	}
	if infer == nil || infer.Delta == nil {
		t.Fatalf("no infer counter in %d series", len(m.Series))
	}
	if int64(*infer.Delta) != res.SamplesIssued || res.SamplesIssued == 0 {
		t.Fatalf("sutproxy's infer counter grew by %g, the run issued %d samples", *infer.Delta, res.SamplesIssued)
	}
	if latest == nil || len(latest()) == 0 {
		t.Fatal("no live values of the known metrics (sutproxy_queue_depth)")
	}
	f, err := os.Open(filepath.Join(dir, serverview.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, sc := 0, bufio.NewScanner(f)
	for sc.Scan() {
		var l serverview.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		lines++
	}
	if want := int(infer.Scrapes); lines < want*len(m.Series)/2 {
		t.Fatalf("%d lines for %d series of %d scrapes", lines, len(m.Series), want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		ServerMetrics *serverview.Metrics `json:"server_metrics"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.ServerMetrics == nil || len(back.ServerMetrics.Series) != len(m.Series) {
		t.Fatalf("result.json's server_metrics: %v", err)
	}
}

// --no-server-metrics scrapes nothing; a gRPC target has no default.
func TestServerMetricsOff(t *testing.T) {
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:100us,instances=2")
	s := serverSettings(t, loadgen.RulesetLoadGen6, 50)
	s.ServerTargetQPS = 200
	for _, c := range []struct {
		name, transport string
		m               ServerMetrics
	}{{"off", "http", ServerMetrics{Off: true}}, {"grpc", "grpc", ServerMetrics{}}} {
		spec := Spec{Target: targetOf(p, c.transport), Model: "m", Settings: s, TotalSamples: 16, PerformanceSamples: 16, ServerMetrics: c.m}
		out, err := Run(t.Context(), spec, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if out.Result.ServerMetrics != nil {
			t.Errorf("%s: server metrics %+v, want none", c.name, out.Result.ServerMetrics)
		}
	}
}

package runner

import (
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/serverstats"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/target"
)

// readyRoundTrip is the median of a few GET /v2/health/ready (ServerReady)
// round trips to p on a connection of the transport's kind: the network
// and the server's front end with nothing queued.
func readyRoundTrip(t *testing.T, p *sutproxy.Proxy, transport string) time.Duration {
	t.Helper()
	var ready func(context.Context) (bool, error)
	if transport == "grpc" {
		c, err := grpcclient.New(p.GRPCAddr(), grpcclient.WithConns(1))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ready = c.ServerReady
	} else {
		c, err := httpclient.New("http://"+p.HTTPAddr(), httpclient.MaxConns(1))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ready = c.ServerReady
	}
	var rtts []time.Duration
	for i := range 41 {
		began := time.Now()
		if ok, err := ready(t.Context()); err != nil || !ok {
			t.Fatalf("ready: %v %v", ok, err)
		}
		if i > 0 { // the first one connects
			rtts = append(rtts, time.Since(began))
		}
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2]
}

// Issue 30's first acceptance point: against a simulated M/D/1 model (a
// constant 2 ms execution, one instance: 500 requests a second) at 50% and
// 90% of its capacity, a real run over loopback's server.statistics says
// the simulation's own record of the run's queue and execution times per
// request, within 5% (they are one record, read two ways: they agree
// exactly), counts exactly the samples issued, and leaves the client's
// overhead positive and below the network's round trip plus 1 ms.
func TestServerStatisticsMatchTheSimulation(t *testing.T) {
	const service = 2 * time.Millisecond
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:2ms,instances=1")
	simServer := p.Backend().(*sim.Server)
	for _, transport := range []string{"http", "grpc"} {
		for _, load := range []float64{0.5, 0.9} {
			qps := load / service.Seconds()
			s := serverSettings(t, loadgen.RulesetLoadGen6, 2000)
			s.ServerTargetQPS = qps
			s.ServerTargetLatencyNs = 100e6
			spec := Spec{Target: targetOf(p, transport), Model: "m", Settings: s, TotalSamples: 64, PerformanceSamples: 64,
				HTTPClient: os.Getenv("NLG_HTTP_CLIENT")}
			before, _ := simServer.Truth("m", "")
			var lives []serverstats.Live
			out, err := Run(t.Context(), spec, Options{ServerQueue: func(l serverstats.Live) { lives = append(lives, l) }})
			if err != nil {
				t.Fatal(err)
			}
			after, _ := simServer.Truth("m", "")
			res := out.Result
			if res.Server == nil || res.Server.Statistics == nil {
				t.Fatalf("%s at %.0f%%: no server.statistics", transport, 100*load)
			}
			st := res.Server.Statistics
			n := after.Requests - before.Requests
			queue := float64(after.QueueNs-before.QueueNs) / float64(n)
			infer := float64(after.InferNs-before.InferNs) / float64(n)
			rtt := readyRoundTrip(t, p, transport)
			t.Logf("%s at %.0f%% (%.0f QPS): %d requests; statistics queue %.3f ms, infer %.3f ms, request %.3f ms, overhead %.3f ms; truth queue %.3f ms, infer %.3f ms (M/D/1: queue %.3f ms); mean latency %.3f ms, ready round trip %v; %d live figures",
				transport, 100*load, qps, st.Requests, st.QueueNs/1e6, st.ComputeInferNs/1e6, st.RequestNs/1e6, st.ClientOverheadNs/1e6,
				queue/1e6, infer/1e6, load/(2*(1-load))*service.Seconds()*1e3, float64(res.SampleLatency.MeanNs)/1e6, rtt, len(lives))
			if !st.Offered || st.Note != "" {
				t.Fatalf("statistics %+v", st)
			}
			// The counter is exact: every sample issued was one request.
			if int64(st.Requests) != res.SamplesIssued || n != st.Requests || res.SamplesFailed != 0 {
				t.Errorf("%d requests in the statistics, %d in the simulation; %d samples issued (%d failed)", st.Requests, n, res.SamplesIssued, res.SamplesFailed)
			}
			within := func(name string, got, want float64) {
				if math.Abs(got-want) > 0.05*want {
					t.Errorf("%s at %.0f%%: %s %.0f ns, the simulation's %.0f ns: more than 5%% apart", transport, 100*load, name, got, want)
				}
			}
			within("queue_ns", st.QueueNs, queue)
			within("compute_infer_ns", st.ComputeInferNs, infer)
			within("compute_infer_ns", st.ComputeInferNs, float64(service))
			if st.ClientOverheadNs <= 0 || st.ClientOverheadNs >= float64(rtt+time.Millisecond) {
				t.Errorf("%s at %.0f%%: client_overhead_ns %.0f, want in (0, round trip %v + 1 ms)", transport, 100*load, st.ClientOverheadNs, rtt)
			}
			if st.MeanBatchSize != 1 {
				t.Errorf("mean batch size %v, want 1 (no batching)", st.MeanBatchSize)
			}
			if len(lives) == 0 || lives[len(lives)-1].RunRequests == 0 {
				t.Errorf("live figures %+v: want some, counting the run's requests", lives)
			}
		}
	}
}

// --no-server-statistics: nothing read, no server block.
func TestNoServerStatistics(t *testing.T) {
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:1ms,instances=1")
	s := serverSettings(t, loadgen.RulesetLoadGen6, 200)
	s.ServerTargetQPS = 100
	spec := Spec{Target: targetOf(p, "http"), Model: "m", Settings: s, TotalSamples: 16, PerformanceSamples: 16, NoServerStatistics: true}
	out, err := Run(t.Context(), spec, Options{ServerQueue: func(serverstats.Live) { t.Error("a live figure with statistics off") }})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.Server != nil {
		t.Errorf("server %+v with statistics off", out.Result.Server)
	}
}

// Every trial of a sweep is a run, and reads the statistics as one: each
// trial's result.json has its own delta, its requests those it issued.
func TestSweepTrialsReadStatistics(t *testing.T) {
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:1ms,instances=2")
	s := serverSettings(t, loadgen.RulesetLoadGen6, 300)
	dir := t.TempDir()
	base := Spec{Target: targetOf(p, "http"), Model: "m", Settings: s, TotalSamples: 64, PerformanceSamples: 64, OutDir: dir}
	res, err := FindPeak(t.Context(), base, Search{Rates: []float64{50, 100}}, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 2 {
		t.Fatalf("%d trials, want 2", len(res.Trials))
	}
	for _, tr := range res.Trials {
		r, err := runlog.Load(filepath.Join(dir, tr.Dir))
		if err != nil {
			t.Fatal(err)
		}
		if r.Server == nil || r.Server.Statistics == nil || !r.Server.Statistics.Offered || int64(r.Server.Statistics.Requests) != r.SamplesIssued {
			t.Errorf("trial %d: server %+v, %d samples issued: want the trial's own delta", tr.Index, r.Server, r.SamplesIssued)
		}
	}
}

// A generative run over an OpenAI API reads nothing: its result says
// "not offered". Off, nothing at all.
func TestStatisticsOfOpenAIRunsNotOffered(t *testing.T) {
	tg, _ := target.Parse("http://127.0.0.1:1")
	for _, api := range []genai.API{genai.APIOpenAIChat, genai.APIOpenAICompletions} {
		ss := &session{t: tg, pr: &Probe{API: api}}
		st := openStatistics(Spec{Model: "m"}, ss, slog.New(slog.DiscardHandler))
		if st == nil || st.r != nil || st.option(nil) != nil {
			t.Fatalf("%s: %+v, want no reader and no engine option", api, st)
		}
		res := &loadgen.Result{}
		st.finish(t.Context(), res, func(s string) string { return s })
		if res.Server == nil || res.Server.Statistics.Offered || res.Server.Statistics.Note != "not offered" {
			t.Errorf("%s: server %+v", api, res.Server)
		}
		st.close()
		if off := openStatistics(Spec{Model: "m", NoServerStatistics: true}, ss, nil); off != nil {
			t.Errorf("%s with statistics off: %+v", api, off)
		}
	}
}

package runlog_test

import (
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// TestSummaryLineBreakdown: a run whose result carries the server's
// statistics ends its summary line with where the time went, totalled on
// the client's mean latency for Server and on the server's time plus the
// overhead for Offline (whose sample latency is no request's); a run
// without them, or with an extension not offered, keeps the line as it was.
func TestSummaryLineBreakdown(t *testing.T) {
	lat := loadgen.LatencyStats{Count: 1000, MeanNs: 14_800_000, Percentiles: []loadgen.Percentile{{P: 0.5, LatencyNs: 12e6}, {P: 0.9, LatencyNs: 14e6}, {P: 0.99, LatencyNs: 20e6}}}
	st := &serverview.Statistics{Offered: true, Requests: 1000, RequestNs: 14.4e6, QueueNs: 9.6e6, ComputeInferNs: 4.8e6, ClientOverheadNs: 0.4e6}
	base := func(scenario string) *loadgen.Result {
		return &loadgen.Result{Ruleset: loadgen.RulesetLoadGen6, Scenario: scenario, Validity: "VALID", SampleLatency: lat,
			SamplesIssued: 1000, QueriesIssued: 1000, DurationNs: 1e9, EndReason: loadgen.StopCompleted}
	}
	plain := runlog.SummaryLine(base("Server"))
	notOffered := base("Server")
	notOffered.Server = &serverview.Server{Statistics: &serverview.Statistics{Note: "not offered"}}
	if got := runlog.SummaryLine(notOffered); got != plain || strings.Contains(got, "Where the time went") {
		t.Errorf("not offered changed the line:\n%s\n%s", got, plain)
	}
	server := base("Server")
	server.Server = &serverview.Server{Statistics: st}
	want := plain + " Where the time went: server queue 9.6 ms of 14.8 ms mean latency (server statistics); compute 4.8 ms; network and client 0.40 ms."
	if got := runlog.SummaryLine(server); got != want {
		t.Errorf("Server:\n got %s\nwant %s", got, want)
	}
	offline := base("Offline")
	offline.SampleLatency.MeanNs = 900e6 // from the query's start: not a request's latency
	offline.Server = &serverview.Server{Statistics: st}
	if got := runlog.SummaryLine(offline); !strings.HasSuffix(got, " Where the time went: server queue 9.6 ms of 14.8 ms mean latency (server statistics); compute 4.8 ms; network and client 0.40 ms.") {
		t.Errorf("Offline: %s", got)
	}
	metrics := base("Server")
	metrics.ServerMetrics = &serverview.Metrics{Series: []serverview.Series{{Name: "vllm:num_requests_waiting", Type: serverview.Gauge,
		First: fptr(0), Mean: fptr(100), Max: fptr(480), Last: fptr(400)}}}
	if got := runlog.SummaryLine(metrics); got != plain+" Where the time went: vllm:num_requests_waiting rose from 0 to 480 (mean 100): the server queues." {
		t.Errorf("metrics: %s", got)
	}
}

func fptr(v float64) *float64 { return &v }

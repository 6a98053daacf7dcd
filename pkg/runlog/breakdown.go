package runlog

import (
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// Breakdown is the sentence saying where res's time went, from what the
// server said of the run (result.json's server.statistics, or its
// server_metrics); "" when it said nothing that tells. SummaryLine and the
// report show it.
func Breakdown(res *loadgen.Result) string {
	if res == nil {
		return ""
	}
	var st *serverview.Statistics
	if res.Server != nil {
		st = res.Server.Statistics
	}
	return serverview.Breakdown(st, res.ServerMetrics, BreakdownClient(res))
}

// BreakdownClient is the client's side of the breakdown: the answered
// samples' mean latency where a sample is one request (Server,
// SingleStream, a closed loop). Offline's and MultiStream's samples share
// a query's requests, and Offline's latency runs from the query's start:
// their mean is no request's, and the breakdown totals the server's
// request time and the client overhead instead.
func BreakdownClient(res *loadgen.Result) serverview.Client {
	if res.Scenario == "Offline" || res.Scenario == "MultiStream" {
		return serverview.Client{}
	}
	return serverview.Client{MeanLatencyNs: float64(loadgen.Answered(res.SampleLatency, res.SampleLatencyAnswered).MeanNs)}
}

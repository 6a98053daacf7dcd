package serverview

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Client is what the client measured of a run, as the breakdown needs it:
// its mean latency (of the answered samples) in ns; 0 when unknown.
type Client struct {
	MeanLatencyNs float64
}

// Share is one part of the client's mean latency, from the statistics
// extension: Part names it as the sentence and the report's bar do.
type Share struct {
	Part string  // PartQueue, PartCompute, PartOther or PartNetwork
	Ns   float64 // mean per request
}

// The parts of a request's time, as the breakdown names them.
const (
	PartQueue   = "server queue"
	PartCompute = "compute"
	// PartOther is the server's time for a request outside its queue and
	// its compute phases (Triton's success time less those).
	PartOther   = "other server time"
	PartNetwork = "network and client"
)

// otherMin is the share of the mean below which the server's other time is
// left out of the sentence: a success time is never exactly its phases'
// sum, and a sliver of difference says nothing.
const otherMin = 0.05

// Shares splits the client's mean latency with the statistics: the
// server's queue, its compute (input + infer + output), its other time
// (when it is worth naming) and the rest, the network, the server's front
// end and the client. The client overhead is Statistics.ClientOverheadNs,
// or the client's mean less RequestNs when that is unset. Nil when the
// statistics say nothing (not offered, no request, no total). The total is the
// client's mean, or RequestNs plus the overhead without it.
func Shares(st *Statistics, c Client) (shares []Share, totalNs float64) {
	if st == nil || !st.Offered || st.Requests == 0 || !(st.RequestNs > 0) {
		return nil, 0
	}
	overhead := st.ClientOverheadNs
	if overhead == 0 && c.MeanLatencyNs > 0 {
		overhead = c.MeanLatencyNs - st.RequestNs
	}
	totalNs = c.MeanLatencyNs
	if !(totalNs > 0) {
		totalNs = st.RequestNs + overhead
	}
	if !(totalNs > 0) {
		return nil, 0 // an overhead below minus the server's time: nothing to split
	}
	compute := st.ComputeInputNs + st.ComputeInferNs + st.ComputeOutputNs
	shares = []Share{{PartQueue, st.QueueNs}, {PartCompute, compute}}
	if other := st.RequestNs - st.QueueNs - compute; other > otherMin*totalNs {
		shares = append(shares, Share{PartOther, other})
	}
	shares = append(shares, Share{PartNetwork, overhead})
	return shares, totalNs
}

// Breakdown is the sentence naming where a run's time went, "" when there
// is nothing to say. With the statistics extension offered, the parts of
// the client's mean latency, largest first:
//
//	server queue 9.6 ms of 14.8 ms mean latency (server statistics); compute 4.8 ms; network and client 0.4 ms
//
// Without them, what the server's known metrics (KnownMetrics) say: a
// queue that grew, a KV cache near full, the running batch, the server's
// own queue time per request:
//
//	vllm:num_requests_waiting rose from 0 to 480 (mean 210): the server queues; vllm:kv_cache_usage_perc reached 0.99: the KV cache is full
//
// docs/where-the-time-went.md documents both.
func Breakdown(st *Statistics, m *Metrics, c Client) string {
	if s := statisticsSentence(st, c); s != "" {
		return s
	}
	return metricsSentence(m)
}

func statisticsSentence(st *Statistics, c Client) string {
	shares, total := Shares(st, c)
	if shares == nil {
		return ""
	}
	slices.SortStableFunc(shares, func(a, b Share) int { return cmp.Compare(b.Ns, a.Ns) })
	var b strings.Builder
	for i, s := range shares {
		if i == 0 {
			fmt.Fprintf(&b, "%s %s of %s mean latency (server statistics)", s.Part, FormatMs(s.Ns), FormatMs(total))
			continue
		}
		if s.Ns < 0 {
			// The server's mean time is above the client's: the two
			// measure different requests (failures, a warm-up) or clocks.
			fmt.Fprintf(&b, "; %s negative (%s: the server's mean request time exceeds the client's mean latency)", s.Part, FormatMs(s.Ns))
			continue
		}
		fmt.Fprintf(&b, "; %s %s", s.Part, FormatMs(s.Ns))
	}
	if st.MeanBatchSize > 1 {
		fmt.Fprintf(&b, "; mean batch size %s", strconv.FormatFloat(st.MeanBatchSize, 'f', 1, 64))
	}
	return b.String()
}

// FormatMs writes ns in ms with two significant figures at least: 14.8 ms,
// 0.41 ms, 0.052 ms.
func FormatMs(ns float64) string {
	v := ns / 1e6
	dec := 1
	switch a := math.Abs(v); {
	case a == 0 || a >= 1:
	case a >= 0.1:
		dec = 2
	default:
		dec = 3
	}
	return strconv.FormatFloat(v, 'f', dec, 64) + " ms"
}

package serverview_test

import (
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/serverview"
)

func f(v float64) *float64 { return &v }

// stats is a statistics delta of 1000 requests with the given means in ms.
func stats(requestMs, queueMs, inMs, inferMs, outMs, overheadMs float64) *serverview.Statistics {
	return &serverview.Statistics{Offered: true, Requests: 1000, RequestNs: requestMs * 1e6, QueueNs: queueMs * 1e6,
		ComputeInputNs: inMs * 1e6, ComputeInferNs: inferMs * 1e6, ComputeOutputNs: outMs * 1e6, ClientOverheadNs: overheadMs * 1e6}
}

func gauge(name string, first, mean, max, last float64) serverview.Series {
	return serverview.Series{Name: name, Type: serverview.Gauge, Labels: map[string]string{}, First: f(first), Mean: f(mean), Max: f(max), Last: f(last)}
}

func TestBreakdown(t *testing.T) {
	waiting := gauge("vllm:num_requests_waiting", 0, 200, 480, 470)
	cases := []struct {
		name   string
		st     *serverview.Statistics
		m      *serverview.Metrics
		client serverview.Client
		want   string
	}{
		{"nothing", nil, nil, serverview.Client{MeanLatencyNs: 5e6}, ""},
		{"not offered", &serverview.Statistics{Offered: false, Note: "not offered"}, nil, serverview.Client{MeanLatencyNs: 5e6}, ""},
		{"offered, no requests", &serverview.Statistics{Offered: true}, nil, serverview.Client{MeanLatencyNs: 5e6}, ""},
		{"queue first", stats(14.4, 9.6, 0.3, 4.2, 0.3, 0.4), nil, serverview.Client{MeanLatencyNs: 14.8e6},
			"server queue 9.6 ms of 14.8 ms mean latency (server statistics); compute 4.8 ms; network and client 0.40 ms"},
		{"network first, sub-ms", stats(0.2, 0.01, 0, 0.19, 0, 0.45), nil, serverview.Client{MeanLatencyNs: 0.65e6},
			"network and client 0.45 ms of 0.65 ms mean latency (server statistics); compute 0.19 ms; server queue 0.010 ms"},
		{"overhead from the client's mean when unset", stats(4, 1, 0, 3, 0, 0), nil, serverview.Client{MeanLatencyNs: 6e6},
			"compute 3.0 ms of 6.0 ms mean latency (server statistics); network and client 2.0 ms; server queue 1.0 ms"},
		{"other server time named past 5%", stats(10, 2, 0, 5, 0, 1), nil, serverview.Client{MeanLatencyNs: 11e6},
			"compute 5.0 ms of 11.0 ms mean latency (server statistics); other server time 3.0 ms; server queue 2.0 ms; network and client 1.0 ms"},
		{"total without the client's mean", stats(4, 1, 0, 3, 0, 0.5), nil, serverview.Client{},
			"compute 3.0 ms of 4.5 ms mean latency (server statistics); server queue 1.0 ms; network and client 0.50 ms"},
		{"no total", stats(4, 1, 0, 3, 0, -5), nil, serverview.Client{}, ""},
		{"negative overhead", stats(5, 1, 0, 4, 0, -0.5), nil, serverview.Client{MeanLatencyNs: 4.5e6},
			"compute 4.0 ms of 4.5 ms mean latency (server statistics); server queue 1.0 ms; network and client negative (-0.50 ms: the server's mean request time exceeds the client's mean latency)"},
		{"statistics win over metrics", stats(4, 1, 0, 3, 0, 0.5), &serverview.Metrics{Series: []serverview.Series{waiting}}, serverview.Client{MeanLatencyNs: 4.5e6},
			"compute 3.0 ms of 4.5 ms mean latency (server statistics); server queue 1.0 ms; network and client 0.50 ms"},
		{"batch size", func() *serverview.Statistics { s := stats(4, 1, 0, 3, 0, 0.5); s.MeanBatchSize = 3.25; return s }(), nil, serverview.Client{MeanLatencyNs: 4.5e6},
			"compute 3.0 ms of 4.5 ms mean latency (server statistics); server queue 1.0 ms; network and client 0.50 ms; mean batch size 3.2"},
		{"queue rose", nil, &serverview.Metrics{Series: []serverview.Series{waiting}}, serverview.Client{},
			"vllm:num_requests_waiting rose from 0 to 480 (mean 200): the server queues"},
		{"statistics not offered, metrics speak", &serverview.Statistics{Note: "not offered"}, &serverview.Metrics{Series: []serverview.Series{waiting}}, serverview.Client{},
			"vllm:num_requests_waiting rose from 0 to 480 (mean 200): the server queues"},
		{"a queue that came and went", nil, &serverview.Metrics{Series: []serverview.Series{gauge("sutproxy_queue_depth", 0, 0.45, 3, 0)}}, serverview.Client{},
			"sutproxy_queue_depth rose from 0 to 3 (mean 0.45): the server queued at times"},
		{"no queue", nil, &serverview.Metrics{Series: []serverview.Series{gauge("tgi_queue_size", 0, 0, 0, 0)}}, serverview.Client{},
			"tgi_queue_size stayed at 0: the server did not queue"},
		{"no queue in any of several, none named alone", nil, &serverview.Metrics{Series: []serverview.Series{
			{Name: "sutproxy_queue_depth", Type: serverview.Gauge, Labels: map[string]string{"model": "batched"}, First: f(0), Mean: f(0), Max: f(0), Last: f(0)},
			{Name: "sutproxy_queue_depth", Type: serverview.Gauge, Labels: map[string]string{"model": "llm"}, First: f(0), Mean: f(0), Max: f(0), Last: f(0)},
			gauge("vllm:num_requests_waiting", 0, 0, 0, 0),
		}}, serverview.Client{},
			"every queue gauge (sutproxy_queue_depth, vllm:num_requests_waiting) stayed at 0: the server did not queue"},
		{"queue already there", nil, &serverview.Metrics{Series: []serverview.Series{gauge("sglang:num_queue_reqs", 12, 12, 12, 12)}}, serverview.Client{},
			"sglang:num_queue_reqs stayed at 12: the server queues"},
		{"the larger of two queues, labelled", nil, &serverview.Metrics{Series: []serverview.Series{
			{Name: "nv_inference_pending_request_count", Type: serverview.Gauge, Labels: map[string]string{"model": "a"}, First: f(0), Mean: f(1), Max: f(3), Last: f(0)},
			{Name: "nv_inference_pending_request_count", Type: serverview.Gauge, Labels: map[string]string{"model": "b", "version": "1"}, First: f(1), Mean: f(20), Max: f(64), Last: f(2)},
		}}, serverview.Client{},
			`nv_inference_pending_request_count{model="b",version="1"} rose from 1 to 64 (mean 20): the server queues`},
		{"KV cache full, batch, queue time histogram", nil, &serverview.Metrics{Series: []serverview.Series{
			waiting,
			gauge("vllm:kv_cache_usage_perc", 0.1, 0.8, 0.99, 0.97),
			gauge("vllm:num_requests_running", 0, 31.25, 32, 32),
			{Name: "vllm:request_queue_time_seconds", Type: serverview.Histogram, Count: f(100), Sum: f(0.96), Mean: f(0.0096)},
		}}, serverview.Client{},
			"vllm:num_requests_waiting rose from 0 to 480 (mean 200): the server queues; vllm:request_queue_time_seconds mean 9.6 ms per request; " +
				"vllm:kv_cache_usage_perc reached 0.99: the KV cache is full; vllm:num_requests_running averaged 31.2 (max 32)"},
		{"KV cache in per cent, nearly full; a low one unsaid", nil, &serverview.Metrics{Series: []serverview.Series{gauge("sglang:token_usage", 50, 80, 92, 90)}}, serverview.Client{},
			"sglang:token_usage reached 92: the KV cache is nearly full"},
		{"KV cache low", nil, &serverview.Metrics{Series: []serverview.Series{gauge("llamacpp:kv_cache_usage_ratio", 0, 0.2, 0.4, 0.1)}}, serverview.Client{}, ""},
		{"Triton's queue µs over its requests", nil, &serverview.Metrics{Series: []serverview.Series{
			{Name: "nv_inference_queue_duration_us", Type: serverview.Counter, Labels: map[string]string{"model": "a"}, Delta: f(6000), Rate: f(1)},
			{Name: "nv_inference_queue_duration_us", Type: serverview.Counter, Labels: map[string]string{"model": "b"}, Delta: f(4000), Rate: f(1)},
			{Name: "nv_inference_request_success", Type: serverview.Counter, Labels: map[string]string{"model": "a"}, Delta: f(10), Rate: f(1)},
			{Name: "nv_inference_request_success", Type: serverview.Counter, Labels: map[string]string{"model": "b"}, Delta: f(10), Rate: f(1)},
		}}, serverview.Client{},
			"nv_inference_queue_duration_us mean 0.50 ms per request"},
		{"batch histogram", nil, &serverview.Metrics{Series: []serverview.Series{
			{Name: "sutproxy_batch_size", Type: serverview.Histogram, Count: f(40), Sum: f(128), Mean: f(3.2)},
		}}, serverview.Client{}, "sutproxy_batch_size mean 3.2"},
		{"unknown metrics only", nil, &serverview.Metrics{Series: []serverview.Series{gauge("process_open_fds", 1, 2, 3, 4)}}, serverview.Client{}, ""},
		{"a gauge without values", nil, &serverview.Metrics{Series: []serverview.Series{{Name: "tgi_queue_size", Type: serverview.Gauge}}}, serverview.Client{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := serverview.Breakdown(c.st, c.m, c.client)
			if got != c.want {
				t.Errorf("Breakdown:\n got %q\nwant %q", got, c.want)
			}
			if strings.ContainsAny(got, "\n\r") {
				t.Errorf("a line break in %q", got)
			}
		})
	}
}

func TestShares(t *testing.T) {
	shares, total := serverview.Shares(stats(14.4, 9.6, 0.3, 4.2, 0.3, 0.4), serverview.Client{MeanLatencyNs: 14.8e6})
	want := []serverview.Share{{Part: serverview.PartQueue, Ns: 9.6e6}, {Part: serverview.PartCompute, Ns: 4.8e6}, {Part: serverview.PartNetwork, Ns: 0.4e6}}
	if total != 14.8e6 || len(shares) != len(want) {
		t.Fatalf("Shares: %v of %v, want %v of 14.8e6", shares, total, want)
	}
	for i, w := range want {
		if shares[i].Part != w.Part || shares[i].Ns-w.Ns > 1 || w.Ns-shares[i].Ns > 1 {
			t.Errorf("share %d: %+v, want %+v", i, shares[i], w)
		}
	}
}

func TestFormatMs(t *testing.T) {
	for ns, want := range map[float64]string{0: "0.0 ms", 14.8e6: "14.8 ms", 1e6: "1.0 ms", 0.41e6: "0.41 ms", 52e3: "0.052 ms", -0.5e6: "-0.50 ms"} {
		if got := serverview.FormatMs(ns); got != want {
			t.Errorf("FormatMs(%v) = %q, want %q", ns, got, want)
		}
	}
}

package serverview

// Kind is what a known metric says of the server.
type Kind string

// The kinds of known metrics. The report plots the gauges of the first
// four under the client's series; the live event stream carries every
// known metric's latest value; the breakdown reads the queue's.
const (
	KindQueue     Kind = "queue"      // requests waiting to be scheduled (a gauge)
	KindBatch     Kind = "batch"      // requests or sequences in the running batch
	KindKVCache   Kind = "kv_cache"   // share of the KV cache in use (0–1, or per cent where the name says so)
	KindGPUUtil   Kind = "gpu_util"   // GPU utilisation
	KindQueueTime Kind = "queue_time" // time requests spent queued (a histogram or a counter of time)
	KindCompute   Kind = "compute"    // time requests spent in the model
	KindRequests  Kind = "requests"   // requests answered (a counter)
)

// Known is a metric that matters, of a server that exports it.
type Known struct {
	Name   string
	Server string // vLLM, Triton, TGI, SGLang, llama.cpp, KServe, DCGM, sutproxy
	Kind   Kind
	// Says is what a user reads from it, in a phrase.
	Says string
}

// KnownMetrics are the metrics docs/ names per server, by exported name
// (a histogram by its base name, without _bucket/_sum/_count). Names are
// the servers' own; a name a server renamed across versions is listed in
// both spellings.
var KnownMetrics = []Known{
	{"vllm:num_requests_waiting", "vLLM", KindQueue, "requests waiting for a place in the running batch: the server queues"},
	{"vllm:num_requests_running", "vLLM", KindBatch, "requests in the running batch"},
	{"vllm:gpu_cache_usage_perc", "vLLM", KindKVCache, "share of the KV cache in use (1 = full: requests wait or are preempted)"},
	{"vllm:kv_cache_usage_perc", "vLLM", KindKVCache, "share of the KV cache in use (newer name)"},
	{"vllm:request_queue_time_seconds", "vLLM", KindQueueTime, "time each request waited before its prefill"},
	{"vllm:time_to_first_token_seconds", "vLLM", KindCompute, "the server's own time to first token"},
	{"vllm:e2e_request_latency_seconds", "vLLM", KindCompute, "the server's own request latency"},

	{"nv_inference_pending_request_count", "Triton", KindQueue, "requests received and not yet executing"},
	{"nv_inference_queue_duration_us", "Triton", KindQueueTime, "cumulative µs requests spent in the scheduler's queue"},
	{"nv_inference_compute_infer_duration_us", "Triton", KindCompute, "cumulative µs in the model's execution"},
	{"nv_inference_request_success", "Triton", KindRequests, "requests answered successfully"},
	{"nv_gpu_utilization", "Triton", KindGPUUtil, "GPU utilisation, 0–1"},

	{"tgi_queue_size", "TGI", KindQueue, "requests waiting in the router's queue"},
	{"tgi_batch_current_size", "TGI", KindBatch, "requests in the current batch"},
	{"tgi_request_queue_duration", "TGI", KindQueueTime, "seconds each request waited in the queue"},

	{"sglang:num_queue_reqs", "SGLang", KindQueue, "requests waiting"},
	{"sglang:num_running_reqs", "SGLang", KindBatch, "requests running"},
	{"sglang:token_usage", "SGLang", KindKVCache, "share of the KV cache's tokens in use"},

	{"llamacpp:requests_deferred", "llama.cpp", KindQueue, "requests deferred for lack of a free slot"},
	{"llamacpp:requests_processing", "llama.cpp", KindBatch, "requests being processed"},
	{"llamacpp:kv_cache_usage_ratio", "llama.cpp", KindKVCache, "share of the KV cache in use"},

	{"request_predict_seconds", "KServe", KindCompute, "seconds in the model's predict"},
	{"request_preprocess_seconds", "KServe", KindCompute, "seconds in preprocessing"},

	{"DCGM_FI_DEV_GPU_UTIL", "DCGM", KindGPUUtil, "GPU utilisation, per cent"},

	{"sutproxy_queue_depth", "sutproxy", KindQueue, "requests waiting for a simulated instance"},
	{"sutproxy_batch_size", "sutproxy", KindBatch, "samples per simulated execution"},
	{"sutproxy_requests_total", "sutproxy", KindRequests, "requests answered"},
}

// LookUp finds a known metric by name (a histogram's base name).
func LookUp(name string) (Known, bool) {
	for _, k := range KnownMetrics {
		if k.Name == name {
			return k, true
		}
	}
	return Known{}, false
}

// Package serverview is what the server itself says of a run, as result.json
// carries it: the delta of its statistics extension over the run
// (server.statistics) and the summary of its Prometheus metrics scraped
// during the run (server_metrics). It holds the types and the arithmetic on
// them, free of any transport: the engine's Result carries them, and the
// readers (pkg/serverstats, pkg/scrape) fill them in.
package serverview

// Server is result.json's "server": what the server's own interfaces said
// of the run.
type Server struct {
	Statistics *Statistics `json:"statistics,omitempty"`
}

// Duration is a cumulative count and total time in ns (Triton's
// StatisticDuration), or the delta of two.
type Duration struct {
	Count uint64 `json:"count"`
	NS    uint64 `json:"ns"`
}

// InferStats are one model version's per-request statistics (Triton's
// inference_stats).
type InferStats struct {
	Success       Duration `json:"success"`
	Fail          Duration `json:"fail"`
	Queue         Duration `json:"queue"`
	ComputeInput  Duration `json:"compute_input"`
	ComputeInfer  Duration `json:"compute_infer"`
	ComputeOutput Duration `json:"compute_output"`
	CacheHit      Duration `json:"cache_hit"`
	CacheMiss     Duration `json:"cache_miss"`
}

// BatchStats are the executions of one batch size.
type BatchStats struct {
	BatchSize     uint64   `json:"batch_size"`
	ComputeInput  Duration `json:"compute_input"`
	ComputeInfer  Duration `json:"compute_infer"`
	ComputeOutput Duration `json:"compute_output"`
}

// ModelStats are one model version's statistics, or their delta over a
// run (Triton's ModelStatistics, without last_inference).
type ModelStats struct {
	Name           string       `json:"name"`
	Version        string       `json:"version"`
	InferenceCount uint64       `json:"inference_count"`
	ExecutionCount uint64       `json:"execution_count"`
	InferenceStats InferStats   `json:"inference_stats"`
	BatchStats     []BatchStats `json:"batch_stats,omitempty"`
}

// Statistics is result.json's "server.statistics": the statistics
// extension read before and after the run, and what the delta says per
// request. When the endpoint does not offer the extension (HTTP 404, gRPC
// UNIMPLEMENTED), Offered is false, Note says "not offered" and the
// figures are zero; when a read failed otherwise, Note says how.
type Statistics struct {
	Offered bool   `json:"offered"`
	Note    string `json:"note,omitempty"`
	// Model and Version are what was read (Version "": every version the
	// server reported for the model, summed).
	Model   string `json:"model,omitempty"`
	Version string `json:"version,omitempty"`
	// Requests is the delta of successful requests; the means below are
	// per successful request, in ns.
	Requests        uint64  `json:"requests"`
	RequestNs       float64 `json:"request_ns"` // success time: the server's whole time for a request
	QueueNs         float64 `json:"queue_ns"`
	ComputeInputNs  float64 `json:"compute_input_ns"`
	ComputeInferNs  float64 `json:"compute_infer_ns"`
	ComputeOutputNs float64 `json:"compute_output_ns"`
	// MeanBatchSize is inferences per execution over the run.
	MeanBatchSize float64 `json:"mean_batch_size"`
	// ClientOverheadNs is the run's mean latency less RequestNs: the
	// network, the server's front end and the client.
	ClientOverheadNs float64 `json:"client_overhead_ns"`
	// Delta is the raw delta per model version.
	Delta []ModelStats `json:"delta"`
}

// Metrics is result.json's "server_metrics": the server's Prometheus
// metrics scraped during the run, summarised per series.
type Metrics struct {
	// Endpoints are the URLs scraped (credentials in a URL are never
	// shown), with what each gave.
	Endpoints  []Endpoint `json:"endpoints"`
	IntervalMs int64      `json:"interval_ms"`
	Series     []Series   `json:"series"`
	// Errors count what went wrong, by kind (pkg/scrape names the kinds:
	// "timeout", "too_large", "too_many_series", "malformed", "status",
	// "connect", "skipped"...); empty when nothing did.
	Errors   map[string]int64 `json:"errors"`
	Warnings []string         `json:"warnings,omitempty"`
}

// Endpoint is one scraped URL.
type Endpoint struct {
	URL     string `json:"url"`
	Scrapes int64  `json:"scrapes"` // that parsed
	Failed  int64  `json:"failed"`  // counted by kind in Metrics.Errors
}

// Series types.
const (
	Counter   = "counter"
	Gauge     = "gauge"
	Histogram = "histogram"
	Summary   = "summary"
	Untyped   = "untyped"
)

// Series is one series' summary over the run. A counter has Delta and
// Rate (per second over the scrapes' span); a gauge First, Mean, Max and
// Last; a histogram Count and Sum (deltas), Mean (Sum/Count) and the p50
// and p99 estimated from the bucket deltas (linear within a bucket, as
// PromQL's histogram_quantile); a summary's and an untyped series' values
// are kept as a gauge's.
type Series struct {
	Name     string            `json:"name"`
	Labels   map[string]string `json:"labels"`
	Endpoint string            `json:"endpoint"`
	Type     string            `json:"type"`
	Scrapes  int64             `json:"scrapes"`
	// Resets counts the times a counter or histogram went back (the
	// server restarted): the deltas count from 0 after each, as PromQL's
	// increase() does.
	Resets int64 `json:"resets,omitempty"`

	Delta *float64 `json:"delta,omitempty"`
	Rate  *float64 `json:"rate,omitempty"`

	First *float64 `json:"first,omitempty"`
	Mean  *float64 `json:"mean,omitempty"`
	Max   *float64 `json:"max,omitempty"`
	Last  *float64 `json:"last,omitempty"`

	Count       *float64 `json:"count,omitempty"`
	Sum         *float64 `json:"sum,omitempty"`
	P50Estimate *float64 `json:"p50_estimate,omitempty"`
	P99Estimate *float64 `json:"p99_estimate,omitempty"`
}

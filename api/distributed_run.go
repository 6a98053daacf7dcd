package api

// A distributed run's traffic between a worker and its coordinator (issue
// 29), once the worker has its assignment (WorkerAssignment):
//
//  1. The worker prepares its shard (probe, samples, requests encoded,
//     connections open) and says so: POST
//     /v1/workers/{name}/runs/{id}/ready with a WorkerReady. A worker that
//     cannot prepare (the target does not answer its probe) posts its error
//     there instead, and the coordinator fails the run naming it.
//  2. The coordinator answers each ready with a WorkerStart: 202 and
//     RetryMs while others are still preparing (the worker posts again),
//     200 and StartNs (the common start, on the worker's own clock) once
//     every worker is ready; 409 when the run has ended.
//  3. From the start on, the worker streams its record: POST
//     /v1/workers/{name}/runs/{id}/records, a body of RecordsMediaType (one
//     pkg/recordwire chunk, in sequence; the last carries its end). 204 when
//     applied (or a resend already applied); 409 when the run has ended
//     (the worker stops); 400 when the chunk is refused.
//
// A heartbeat's answer may tell the worker to stop (WorkerHeartbeatAck).

// RecordsMediaType is the media type of a worker's record chunk.
const RecordsMediaType = "application/vnd.netloadgen.records"

// MaxRecordsBody bounds one record chunk's body (pkg/recordwire's default
// limit on a chunk).
const MaxRecordsBody = 64 << 20

// WorkerReady is the body of POST /v1/workers/{name}/runs/{id}/ready: what
// the worker's probe and sample library found, which every worker of a run
// must agree on (the coordinator builds the one trace from them), or the
// error that kept it from preparing.
type WorkerReady struct {
	// Error: the worker could not prepare its shard; the rest is unset.
	Error                     string `json:"error,omitempty"`
	QSLTotalSampleCount       int    `json:"qsl_total_sample_count,omitempty"`
	QSLPerformanceSampleCount int    `json:"qsl_performance_sample_count,omitempty"`
	// TraceQueries is the length of the trace the worker built: the
	// coordinator's must be the same.
	TraceQueries int    `json:"trace_queries,omitempty"`
	SUTName      string `json:"sut_name,omitempty"`
	// What the probe found, for the run's logs and result.json.
	API          string `json:"api,omitempty"`
	Protocol     string `json:"protocol,omitempty"`
	Batched      bool   `json:"batched,omitempty"`
	MaxBatchSize int    `json:"max_batch_size,omitempty"`
}

// WorkerStart answers a WorkerReady.
type WorkerStart struct {
	// StartNs is the run's common start in ns since the Unix epoch on the
	// worker's own clock (the coordinator's start plus the worker's
	// measured offset); 0 while RetryMs is set.
	StartNs int64 `json:"start_ns,omitempty"`
	// RetryMs: not every worker is ready yet; post again after this long.
	RetryMs int64 `json:"retry_ms,omitempty"`
}

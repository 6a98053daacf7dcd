// Package triton holds Triton's protocol extensions that a load generator
// uses: model configuration and statistics, in the JSON form of Triton's HTTP
// API (numbers as JSON numbers), with conversions to and from the gRPC messages.
package triton

// ModelConfig is the subset of Triton's model configuration that clients read
// (PROTOCOL.md §5). JSON names are Triton's.
type ModelConfig struct {
	Name                   string                  `json:"name"`
	Platform               string                  `json:"platform,omitempty"`
	Backend                string                  `json:"backend,omitempty"`
	MaxBatchSize           int32                   `json:"max_batch_size"`
	Input                  []ModelInput            `json:"input"`
	Output                 []ModelOutput           `json:"output"`
	InstanceGroup          []InstanceGroup         `json:"instance_group,omitempty"`
	DynamicBatching        *DynamicBatching        `json:"dynamic_batching,omitempty"`
	SequenceBatching       *SequenceBatching       `json:"sequence_batching,omitempty"`
	ModelTransactionPolicy *ModelTransactionPolicy `json:"model_transaction_policy,omitempty"`
}

// ModelInput is one input of a ModelConfig. DataType is Triton's enum name
// (TYPE_FP32, ...); Dims exclude the batch dimension when MaxBatchSize > 0.
type ModelInput struct {
	Name     string  `json:"name"`
	DataType string  `json:"data_type"`
	Format   string  `json:"format,omitempty"`
	Dims     []int64 `json:"dims"`
	Optional bool    `json:"optional,omitempty"`
}

// ModelOutput is one output of a ModelConfig.
type ModelOutput struct {
	Name          string  `json:"name"`
	DataType      string  `json:"data_type"`
	Dims          []int64 `json:"dims"`
	LabelFilename string  `json:"label_filename,omitempty"`
}

// InstanceGroup says how many instances of a model run, and where.
type InstanceGroup struct {
	Name  string  `json:"name,omitempty"`
	Count int32   `json:"count"`
	GPUs  []int32 `json:"gpus,omitempty"`
	Kind  string  `json:"kind"` // KIND_AUTO, KIND_GPU, KIND_CPU, KIND_MODEL
}

// DynamicBatching is the server-side batcher's configuration.
type DynamicBatching struct {
	PreferredBatchSize        []int32 `json:"preferred_batch_size,omitempty"`
	MaxQueueDelayMicroseconds uint64  `json:"max_queue_delay_microseconds"`
	PreserveOrdering          bool    `json:"preserve_ordering,omitempty"`
}

// SequenceBatching marks a stateful model.
type SequenceBatching struct {
	MaxSequenceIdleMicroseconds uint64 `json:"max_sequence_idle_microseconds,omitempty"`
}

// ModelTransactionPolicy says whether a model is decoupled (several responses
// per request).
type ModelTransactionPolicy struct {
	Decoupled bool `json:"decoupled"`
}

// Duration is a cumulative count and total time in nanoseconds.
type Duration struct {
	Count uint64 `json:"count"`
	NS    uint64 `json:"ns"`
}

// InferStatistics are a model's cumulative per-request statistics.
type InferStatistics struct {
	Success       Duration `json:"success"`
	Fail          Duration `json:"fail"`
	Queue         Duration `json:"queue"`
	ComputeInput  Duration `json:"compute_input"`
	ComputeInfer  Duration `json:"compute_infer"`
	ComputeOutput Duration `json:"compute_output"`
	CacheHit      Duration `json:"cache_hit"`
	CacheMiss     Duration `json:"cache_miss"`
}

// BatchStatistics are the execution statistics of one batch size.
type BatchStatistics struct {
	BatchSize     uint64   `json:"batch_size"`
	ComputeInput  Duration `json:"compute_input"`
	ComputeInfer  Duration `json:"compute_infer"`
	ComputeOutput Duration `json:"compute_output"`
}

// ModelStatistics are one model version's cumulative statistics.
type ModelStatistics struct {
	Name           string            `json:"name"`
	Version        string            `json:"version"`
	LastInference  uint64            `json:"last_inference"` // ms since the epoch
	InferenceCount uint64            `json:"inference_count"`
	ExecutionCount uint64            `json:"execution_count"`
	InferenceStats InferStatistics   `json:"inference_stats"`
	BatchStats     []BatchStatistics `json:"batch_stats"`
}

// StatisticsResponse is the answer to GET /v2/models/{m}/stats and ModelStatistics.
type StatisticsResponse struct {
	ModelStats []ModelStatistics `json:"model_stats"`
}

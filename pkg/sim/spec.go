package sim

import "github.com/netloadgen/netloadgen/kserve"

// Function names the computation that turns a request's inputs into its
// outputs.
type Function string

// The output functions.
const (
	// Echo answers each output i with input i's bytes, datatype and shape.
	Echo Function = "echo"
	// AddSub is Triton's "simple" model: OUTPUT0 = INPUT0 + INPUT1 and
	// OUTPUT1 = INPUT0 - INPUT1, element-wise INT32 with two's-complement
	// wrap-around.
	AddSub Function = "add_sub"
	// Classify answers one FP32 output of num_classes scores per sample whose
	// top-1 class is ExpectedClass of the sample's input bytes.
	Classify Function = "classify"
)

// ModelSpec describes one simulated model. Zero values take the defaults
// documented on each field; Validate checks a spec and New applies them.
type ModelSpec struct {
	Name string `json:"name"`
	// Versions are the model's versions, each served by its own queue and
	// instances; default ["1"]. The last one listed is the default version
	// (answered when a request names none).
	Versions []string `json:"versions,omitempty"`
	// Platform is reported in metadata and config; default "sim".
	Platform string `json:"platform,omitempty"`
	// MaxBatchSize > 0 makes the first dimension of every input and output
	// the batch dimension (its shape starts with -1) and caps a request's
	// batch; 0 means the model takes exactly one sample per request.
	MaxBatchSize int          `json:"max_batch_size,omitempty"`
	Inputs       []TensorSpec `json:"inputs"`
	// Outputs may be left out: they are then derived from Function (echo:
	// OUTPUTi like INPUTi; add_sub: OUTPUT0, OUTPUT1; classify: OUTPUT0).
	Outputs  []TensorSpec `json:"outputs,omitempty"`
	Function Function     `json:"function"`
	// NumClasses is the number of scores per sample of a classify model.
	NumClasses int `json:"num_classes,omitempty"`
	// Latency is the time one execution takes; the zero value is no delay.
	Latency LatencySpec `json:"latency,omitzero"`
	// Instances is how many executions run at once; default 1.
	Instances       int           `json:"instances,omitempty"`
	DynamicBatching *BatchingSpec `json:"dynamic_batching,omitempty"`
	// Seed seeds the latency sampler; 0 derives it from the model's name, so
	// every run of the same spec draws the same sequence of latencies.
	Seed uint64 `json:"seed,omitempty"`
	// Cache makes the model cheat: a request whose inputs (and requested
	// outputs) it has answered before is answered from a cache after
	// CacheHitLatency, without queueing or executing. The answers are the
	// same; only the time differs. It exists to show that the compliance
	// checks (TEST04, the caching check) catch such a server.
	Cache bool `json:"cache,omitempty"`
	// CacheHitLatency is how long a cache hit takes; default 0 (at once).
	CacheHitLatency Duration `json:"cache_hit_latency,omitempty"`
	// LLM makes the model a simulated LLM (LLMSpec): its tensors, function
	// and time are then the LLM's, and the tensor knobs above are refused.
	LLM *LLMSpec `json:"llm,omitempty"`
	// Degrade slows the model down once a period of load has lasted a while
	// (DegradeSpec): a server a short trial misjudges.
	Degrade *DegradeSpec `json:"degrade,omitempty"`
	// Transient answers slowly for the first moments of each period of load
	// (TransientSpec): a server whose first fraction of a second must not
	// decide a search.
	Transient *TransientSpec `json:"transient,omitempty"`
	// Idle is the gap between arrivals that ends a period of load, for
	// Degrade and Transient; default 1s. It is an error without them.
	Idle Duration `json:"idle,omitempty"`
	// Restart says what else starts a period of load: "idle" (default, the
	// gap only) or "probe" (also the first request after a readiness check).
	Restart string `json:"restart,omitempty"`
}

// TensorSpec is one input or output. Shape uses -1 for a variable dimension
// and includes the batch dimension (-1) when the model batches.
type TensorSpec struct {
	Name     string          `json:"name"`
	Datatype kserve.DataType `json:"datatype"`
	Shape    []int64         `json:"shape"`
}

// Latency distributions.
const (
	Constant  = "constant"  // always Value
	Uniform   = "uniform"   // uniform on [Min, Max]
	LogNormal = "lognormal" // Median × exp(Sigma × N(0,1)), capped at Max if set
	Empirical = "empirical" // one of Samples, each equally likely
)

// LatencySpec is the time one execution takes: a draw from the distribution
// plus PerSample for each sample in the execution. An execution is one
// request, or one dynamic batch of requests, so PerSample makes big batches
// cost more while the draw is the fixed cost of running at all.
type LatencySpec struct {
	// Distribution is constant, uniform, lognormal or empirical; empty means
	// no fixed cost (only PerSample, if any).
	Distribution string     `json:"distribution,omitempty"`
	Value        Duration   `json:"value,omitempty"`   // constant
	Min          Duration   `json:"min,omitempty"`     // uniform
	Max          Duration   `json:"max,omitempty"`     // uniform; optional cap for lognormal
	Median       Duration   `json:"median,omitempty"`  // lognormal
	Sigma        float64    `json:"sigma,omitempty"`   // lognormal: std dev of the log
	Samples      []Duration `json:"samples,omitempty"` // empirical
	PerSample    Duration   `json:"per_sample,omitempty"`
}

// IsZero reports whether l adds no delay at all.
func (l LatencySpec) IsZero() bool {
	return l.Distribution == "" && l.PerSample == 0
}

// BatchingSpec turns on dynamic batching: an idle instance takes queued
// requests, oldest first and never split, up to MaxBatchSize samples, and
// waits until the oldest has queued MaxQueueDelay for more to arrive before
// running a batch that is not full.
type BatchingSpec struct {
	// MaxBatchSize caps the samples in one execution; default and upper
	// bound: the model's MaxBatchSize.
	MaxBatchSize  int      `json:"max_batch_size,omitempty"`
	MaxQueueDelay Duration `json:"max_queue_delay,omitempty"`
}

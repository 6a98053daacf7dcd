package api

import (
	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/triton"
)

// ProbeRequest is the body of POST /v1/probe: an endpoint to check before
// a run. Without a model only the server is probed.
type ProbeRequest struct {
	Target       string `json:"target"`
	Model        string `json:"model,omitempty"`
	ModelVersion string `json:"model_version,omitempty"`
	// Headers go on every request of the probe, as a run's (RunSpec.Headers).
	Headers map[string]string `json:"headers,omitempty"`
	// TLS is an https:// or grpcs:// target's TLS settings, as a run's
	// (RunSpec.TLS).
	TLS *TLS `json:"tls,omitempty"`
}

// ProbeResponse is what the endpoint said about itself and the model. A
// target that answers badly is still a 200 with what was learnt and Error
// set; only a bad request or a refused target is a 4xx.
type ProbeResponse struct {
	Target string `json:"target"`
	// Live and Ready are the server's health endpoints.
	Live  bool `json:"live"`
	Ready bool `json:"ready"`
	// Server carries its name, version and extensions (also listed in
	// Extensions for convenience).
	Server     *kserve.ServerMetadata `json:"server,omitempty"`
	Extensions []string               `json:"extensions"`
	Model      *kserve.ModelMetadata  `json:"model,omitempty"`
	ModelReady bool                   `json:"model_ready"`
	// Config is Triton's model configuration, where the server lists the
	// model_configuration extension.
	Config *triton.ModelConfig `json:"config,omitempty"`
	// MaxBatchSize and Batched are what a run would use: the config's
	// max_batch_size, or a leading -1 dimension on every input.
	MaxBatchSize int  `json:"max_batch_size"`
	Batched      bool `json:"batched"`
	// Models are the server's models where it lists them (Triton's
	// model_repository extension, over HTTP), at most 1,000; absent
	// otherwise.
	Models []triton.RepositoryModel `json:"models,omitempty"`
	// API is what a run of the model would speak: a generative API found
	// (kserve-stream, generate-stream: what a run's empty `api` becomes),
	// or "tensor" (KServe v2 infer). Absent without a model.
	API string `json:"api,omitempty"`
	// Inference is one timed request with synthetic inputs, when a model
	// was named and is ready.
	Inference *ProbeInference `json:"inference,omitempty"`
	// Error says why the probe stopped short; empty when every step passed.
	Error string `json:"error,omitempty"`
}

// ProbeAPITensor is a probe answer's api for a tensor model.
const ProbeAPITensor = "tensor"

// ProbeInference is one timed inference.
type ProbeInference struct {
	LatencyMs float64 `json:"latency_ms"`
	// OK is true when the server answered the request without an error.
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Package sim simulates inference models for sutproxy: each model has a spec
// (tensors, a latency distribution, instances, optional dynamic batching and
// an output function), and a Server runs a set of them behind the KServe v2
// Backend interface with real queueing, so that a load generator pointed at
// it meets a server with a finite, known capacity.
package sim

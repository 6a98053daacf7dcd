// Package sut adapts the engine's queries to KServe v2 requests: one
// pre-encoded request per query (a batch when the model takes one), Offline's
// single query cut into batch_size requests with at most max_inflight in
// flight, and one request per sample for models without a batch dimension.
// It is the only package that knows both the engine and the protocol.
package sut

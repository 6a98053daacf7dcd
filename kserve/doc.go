// Package kserve speaks the KServe v2 / Open Inference Protocol: the tensor and
// request model shared by every transport, the REST codec (JSON and the binary
// tensor extension), and the gRPC client. The REST client is kserve/httpclient.
//
// Tensor data is held in one form everywhere: raw little-endian row-major bytes,
// which is what the binary extension and gRPC's raw_*_contents carry. JSON and
// gRPC typed contents are converted at the edge, so a request body can be
// encoded once before a run and sent many times.
package kserve

// Package kserve speaks the KServe v2 / Open Inference Protocol: the tensor and
// request model shared by every transport, its datatypes and errors, the REST
// codec (JSON and the binary tensor extension), and the conversions to and
// from the gRPC messages of kserve/inferencepb.
//
// It holds no client: kserve/httpclient (fasthttp) and kserve/grpcclient
// (grpc-go) sit beside it, as kserve/server does, so that what needs only the
// protocol (the event loops of pkg/httploop and pkg/grpcloop, the sample
// library, the simulated models) imports no client library and no receive
// timestamps.
//
// Tensor data is held in one form everywhere: raw little-endian row-major bytes,
// which is what the binary extension and gRPC's raw_*_contents carry. JSON and
// gRPC typed contents are converted at the edge, so a request body can be
// encoded once before a run and sent many times.
package kserve

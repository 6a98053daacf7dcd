// Package grpcclient is the KServe v2 gRPC client on grpc-go: a pool of
// connections, the protocol's calls and Triton's ModelStreamInfer, with
// requests converted and encoded once by package kserve's protobuf codec and
// sent many times.
//
// It sits beside the codec rather than in it so that what needs only the
// protocol (the event loops, the servers, the sample library) imports neither
// a client nor the receive timestamps of pkg/rxstamp.
package grpcclient

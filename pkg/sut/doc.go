// Package sut adapts the engine's queries to KServe v2 requests: one
// pre-encoded request per query (a batch when the model takes one), Offline's
// single query cut into batch_size requests with at most max_inflight in
// flight, and one request per sample for models without a batch dimension.
// It is the only package that knows both the engine and the protocol.
//
// It sends over one of four clients: the HTTP pool or grpc-go (Network, a
// goroutine per request) or an event loop of pkg/httploop or pkg/grpcloop
// (Loop and GRPCLoop, on the engine's issuer goroutine). Open makes that
// choice from a client's name, falling back from a loop where it cannot run,
// so that a run's caller neither imports the loops nor repeats the rules.
package sut

// Package grpcloop is a gRPC client for load generation that runs entirely
// on its caller's goroutine: unary calls over HTTP/2 with prior knowledge
// (h2c), on a few connections, with its own epoll set and non-blocking
// sockets, so a load generator's issuer sends a call at its due time and
// reads the answers while it waits for the next one, with none of grpc-go's
// reader, writer and caller goroutines between the network and the engine.
//
// Requests are encoded once (NewRequest): a HEADERS block of literal fields
// that never touch HPACK's dynamic table, and the length-prefixed message;
// a send copies them behind the connection's other frames and writes the
// stream id. Answers are checked for their HTTP/2 and gRPC framing and
// their status, as grpcclient.Client.InferPreparedDiscard does, and, with
// Config.Check, for their message without its tensor bytes (skipped as they
// arrive, never kept). Linux only; elsewhere New returns ErrUnsupported so
// the caller falls back to grpcclient.Client.
//
// The package also has a generative client, Generator (genai.Client, API
// kserve-stream), on the same frames and header encoding: one long-lived
// ModelStreamInfer stream per connection carrying every request sent on it,
// a reader goroutine per connection blocked in a read of a timestamped
// socket (pkg/rxstamp), each read ending where a frame ends so that a
// token's frame takes its own segment's stamp, not a later one's, the
// responses read in place (kserve/genwire). A
// streamed answer outlives its send by seconds, so its reading is not tied
// to the issuer's polls as the Loop's is. It allocates once per request and
// never per token, where grpc-go's receive path allocates about 4.6 times
// per token; it needs no epoll, so it runs on every platform.
package grpcloop

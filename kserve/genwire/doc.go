// Package genwire is Triton's LLM conventions over KServe v2 gRPC
// ModelStreamInfer on the wire, for the generative clients that speak it
// (kserve/grpcclient's Generator on grpc-go, pkg/grpcloop's on its own
// HTTP/2 frames): a generative request encoded straight into a reused
// buffer (AppendRequest), and a ModelStreamInferResponse read in place for
// the few facts a token timer needs (Response.Walk), and what a response
// does to its request (Call, Deliver: tokens to the handler, the end, the
// errors), so that both clients fail a malformed answer alike. Nothing
// allocates per token: at LLM rates a decoded response per token would be
// the client's main cost.
//
// Inputs text_input (BYTES), max_tokens (INT32), stream (BOOL) and, where
// the model declares them, ignore_eos and sampling_parameters; outputs
// text_output and output_ids; the last response of a request carries the
// parameter triton_final_response = true, which the request asks for with
// triton_enable_empty_final_response (without it a decoupled model may end
// a request with no response at all, and the client could not tell).
package genwire

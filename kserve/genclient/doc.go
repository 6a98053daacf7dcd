// Package genclient is genai.Client over HTTP: Triton's generate extension
// (POST /v2/models/{model}/generate and /generate_stream) and the
// OpenAI-compatible POST /v1/completions and /v1/chat/completions,
// streamed (server-sent events) or not.
//
// It rides on kserve/httpclient's keep-alive pool, so a target's path
// prefix (http://host/openai → /openai/v1/chat/completions), added headers
// (a Host that routes), TLS and the rule that a written request is never
// sent twice are the tensor client's. The answer is read as it arrives, by
// the request's own goroutine: one goroutine per request in flight, each
// holding one connection, at most MaxConns of them (httpclient.MaxConns;
// default 1024 here): requests beyond it wait for a connection, their
// latency counting on from their scheduled time as the engine measures it.
//
// Every response is timed by when its last byte reached the kernel
// (pkg/rxstamp's receive timestamps; the read's return time where there
// are none), not by when this process got round to it. Parsing allocates
// nothing per token: the SSE parser and the JSON walker work in buffers
// reused across the stream and pooled across requests.
//
// An OpenAI request carries X-Request-Id: "nlg-", 8 random hex digits of
// the client, "-" and the request's genai.Request.ID (the sample's
// sequence number), so that a server's logs (vLLM takes the header as its
// request id) name the sample, and two runs never send the same id.
//
// A token-bearing response is one with non-empty output text (content,
// reasoning content, text, text_output) or output_ids; it counts
// len(output_ids) tokens when the server gives them, else one. The server's
// own count (usage.completion_tokens, or output_ids summed) is reported in
// End's genai.Usage.
//
// An answer without one token-bearing response fails (genai.ErrNoOutputTokens,
// malformed). Interim heads (100, 103) before the answer are skipped; 101
// fails. Requests ask for Accept-Encoding: identity, and an answer with
// another Content-Encoding fails, naming it.
//
// Failures: an HTTP error status is a *kserve.Error; a malformed stream
// (bad SSE or chunk framing, an error event, an OpenAI stream without its
// `data: [DONE]`, an answer that is not JSON) wraps genai.ErrStream and
// kserve.ErrMalformed; a connection closed mid-answer wraps
// kserve.ErrConnectionClosed; a cancelled context ends a stalled stream with
// kserve.ErrTransport and the context's error, httpclient's RequestTimeout
// (the whole answer) or Options.StallTimeout (no byte for that long) with
// a timeout.
package genclient

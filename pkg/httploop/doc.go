// Package httploop is an HTTP/1.1 keep-alive client that runs entirely on
// its caller's goroutine: its own epoll set, non-blocking sockets and a
// timerfd, so a load generator's issuer can send a request at its due time
// and read the answers while it waits for the next one, with no goroutine
// hand-offs through Go's netpoller. It sends pre-encoded requests and checks
// the answers the way httpclient.Client.InferPreparedCheck does, keeping of
// their bodies only the JSON, for Config.Check. It speaks plain text or,
// with Config.TLS, TLS (tls_linux.go). Linux only; elsewhere New
// returns ErrUnsupported so the caller falls back to httpclient.Client.
package httploop

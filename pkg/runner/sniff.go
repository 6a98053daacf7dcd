package runner

import (
	"bytes"
	"context"
	"io"
	"net"
	"time"
)

// sniffTimeout bounds the wait for a port's first answer when it did not
// answer as the target's transport.
const sniffTimeout = time.Second

// http2Hello is HTTP/2's client connection preface and an empty SETTINGS
// frame: a gRPC server answers it with its own SETTINGS frame.
var http2Hello = append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 4, 0, 0, 0, 0, 0)

// otherProtocol says what host speaks when it did not answer as scheme
// does: "grpc" when an http:// target's port answers HTTP/2's preface with
// a SETTINGS frame, "http" when a grpc:// target's port answers an
// HTTP/1.1 request; "" when it cannot tell.
func otherProtocol(ctx context.Context, scheme, host string) string {
	ctx, cancel := context.WithTimeout(ctx, sniffTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return ""
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	if scheme == "http" {
		if _, err := c.Write(http2Hello); err != nil {
			return ""
		}
		var h [9]byte // a frame header: length(3) type(1) flags(1) stream(4)
		if _, err := io.ReadFull(c, h[:]); err == nil && h[3] == 0x4 {
			return "grpc"
		}
		return ""
	}
	if _, err := io.WriteString(c, "GET /v2/health/live HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n"); err != nil {
		return ""
	}
	var h [5]byte
	if _, err := io.ReadFull(c, h[:]); err == nil && bytes.Equal(h[:], []byte("HTTP/")) {
		return "http"
	}
	return ""
}

// otherProtocolHint is what to type for a target whose port speaks the
// other transport ("it speaks gRPC: use grpc://host:port"), or "".
func otherProtocolHint(ctx context.Context, scheme, host string) string {
	if scheme != "http" && scheme != "grpc" {
		return "" // TLS: the handshake's check named what was wrong
	}
	switch otherProtocol(ctx, scheme, host) {
	case "grpc":
		return "it speaks gRPC: use grpc://" + host
	case "http":
		return "it speaks HTTP/1.1: use http://" + host
	}
	return ""
}

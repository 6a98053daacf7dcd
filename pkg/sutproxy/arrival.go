package sutproxy

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/valyala/fasthttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"

	"github.com/netloadgen/netloadgen/pkg/rxstamp"
)

// Requests tell the backend when they reached this host's kernel, so that
// a simulated model's latency starts there and the proxy's own wake-up
// (0.1–0.4 ms on an idle VM) is not added to every answer; and they let it
// learn when its answers leave (the next write on the connection), after the
// encoding and grpc-go's writer hand-off (~0.05 ms HTTP, ~0.14 ms gRPC
// measured here). The latest arrival on the connection is this request's or
// a later one's (requests are read before they are handled), never an
// earlier one's.

// setHTTPArrival stores the request's arrival for the backend; fasthttp's
// RequestCtx answers Value from its user values.
func setHTTPArrival(ctx *fasthttp.RequestCtx) {
	nc := ctx.Conn()
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn() // TLS over the timestamped socket
	}
	if wc, ok := nc.(interface{ Unwrap() net.Conn }); ok {
		nc = wc.Unwrap() // recording emissions (server.EmitConn) over it
	}
	if rc, ok := nc.(*rxstamp.Conn); ok {
		if at, ok := rc.Arrival(time.Now()); ok {
			ctx.SetUserValue(rxstamp.ContextKey{}, rxstamp.NewStamp(at, rc))
		}
	}
}

// arrivalInterceptor adds the request's arrival to a unary call's context,
// finding its connection by the peer's address.
func arrivalInterceptor(ln *rxstamp.Listener) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if p, ok := peer.FromContext(ctx); ok {
			if rc := ln.Conn(p.Addr); rc != nil {
				if at, ok := rc.Arrival(time.Now()); ok {
					ctx = rxstamp.NewContext(ctx, rxstamp.NewStamp(at, rc))
				}
			}
		}
		return handler(ctx, req)
	}
}

// streamArrival is when a stream message (its call's context) reached the
// host: the latest arrival on its connection, found by the peer's address
// (zero when unknown).
func streamArrival(ln *rxstamp.Listener) func(context.Context) time.Time {
	return func(ctx context.Context) time.Time {
		if p, ok := peer.FromContext(ctx); ok {
			if rc := ln.Conn(p.Addr); rc != nil {
				if at, ok := rc.Arrival(time.Now()); ok {
					return at
				}
			}
		}
		return time.Time{}
	}
}

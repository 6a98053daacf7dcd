package sutproxy

// The front an endpoint is deployed behind, for tests of a client that
// reaches one: an ingress that routes by Host (404 for a host it does not
// serve) and an authorizer that wants a header (401 without it).

import (
	"context"
	"net"
	"strings"

	"github.com/valyala/fasthttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/netloadgen/netloadgen/kserve"
)

// guard checks a request's Host (or :authority) and required headers.
type guard struct {
	host    string // "": any
	require []kserve.Header
}

func (g guard) active() bool { return g.host != "" || len(g.require) > 0 }

// hostOK compares host (a Host header or :authority, perhaps with a
// port) with the one served, as an ingress's virtual host does: by name,
// in any case, whatever the port.
func (g guard) hostOK(host string) bool {
	if g.host == "" {
		return true
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.EqualFold(host, g.host)
}

// httpGuard wraps next: 404 for another host, 401 without a required
// header, each with a KServe error body. sutproxy's own /metrics is left
// open to its scraper.
func (g guard) httpGuard(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if !g.active() {
		return next
	}
	return func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/metrics" {
			next(ctx)
			return
		}
		if !g.hostOK(string(ctx.Host())) {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			ctx.SetContentType("application/json")
			ctx.SetBodyString(`{"error":"no route for this host"}`)
			return
		}
		for _, h := range g.require {
			if string(ctx.Request.Header.Peek(h.Name)) != h.Value {
				ctx.SetStatusCode(fasthttp.StatusUnauthorized)
				ctx.SetContentType("application/json")
				ctx.SetBodyString(`{"error":"missing or wrong ` + h.Name + ` header"}`)
				return
			}
		}
		next(ctx)
	}
}

// check is the gRPC side: UNIMPLEMENTED for another :authority (what
// grpc-go reports for an ingress's HTTP 404), UNAUTHENTICATED without a
// required header.
func (g guard) check(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	if g.host != "" {
		auth := md.Get(":authority")
		if len(auth) == 0 || !g.hostOK(auth[0]) {
			return status.Error(codes.Unimplemented, "no route for this host")
		}
	}
	for _, h := range g.require {
		if v := md.Get(h.Name); len(v) != 1 || v[0] != h.Value {
			return status.Errorf(codes.Unauthenticated, "missing or wrong %s metadata", strings.ToLower(h.Name))
		}
	}
	return nil
}

// grpcOptions are the interceptors of every call, unary and streaming
// (health and reflection included).
func (g guard) grpcOptions() []grpc.ServerOption {
	if !g.active() {
		return nil
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if err := g.check(ctx); err != nil {
				return nil, err
			}
			return handler(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			if err := g.check(ss.Context()); err != nil {
				return err
			}
			return handler(srv, ss)
		}),
	}
}

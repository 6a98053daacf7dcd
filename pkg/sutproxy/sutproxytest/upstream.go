package sutproxytest

// Upstreams for forwarding tests: simulated models behind a server that
// speaks the binary tensor data extension the way a real upstream may.

import (
	"context"
	"maps"
	"net"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
)

// The ways an upstream answers.
const (
	// UpstreamHTTP answers over HTTP in the encoding it is asked for: a
	// simulating sutproxy itself. A forwarding sutproxy always asks an HTTP
	// upstream for binary tensor data (httpclient's default; it has no
	// flag for JSON), so this is the binary HTTP upstream.
	UpstreamHTTP = "http"
	// UpstreamHTTPJSON answers over HTTP in pure JSON whatever it is asked,
	// as a server without the binary extension does: the way a JSON answer
	// reaches a forwarder that asks for binary data.
	UpstreamHTTPJSON = "http-json"
	// UpstreamGRPC answers over gRPC with binary_data_size on every output,
	// as the KServe Python server does.
	UpstreamGRPC = "grpc"
)

// Upstream is a server for a forwarding sutproxy to forward to.
type Upstream struct {
	URL     string
	backend *upstreamBackend // nil for UpstreamHTTP
}

// EncodingRequests counts the requests that reached a non-HTTP (gRPC)
// upstream carrying a parameter of the binary extension: none should, since
// those describe how the front's client framed its own message. (Over HTTP
// the forwarder's client adds its own, so they are not counted there.)
func (u *Upstream) EncodingRequests() int64 {
	if u.backend == nil {
		return 0
	}
	return u.backend.encoding.Load()
}

// StartUpstream serves the models (Start's flags) as style (UpstreamHTTP,
// UpstreamHTTPJSON or UpstreamGRPC) on a loopback port, closed when t ends.
func StartUpstream(t testing.TB, style string, flags ...string) *Upstream {
	t.Helper()
	p := Start(t, flags...)
	if style == UpstreamHTTP {
		return &Upstream{URL: Target(p, "http")}
	}
	if style != UpstreamHTTPJSON && style != UpstreamGRPC {
		t.Fatalf("sutproxytest: upstream style %q", style)
	}
	b := &upstreamBackend{Backend: p.Backend(), style: style}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if style == UpstreamGRPC {
		s := server.NewGRPCServer(b)
		go s.Serve(ln)
		t.Cleanup(s.Stop)
		return &Upstream{URL: "grpc://" + addr, backend: b}
	}
	s := &fasthttp.Server{Handler: server.NewHTTPHandler(b).ServeFastHTTP}
	go s.Serve(ln)
	t.Cleanup(func() {
		s.Shutdown()
		ln.Close() // a Serve not started yet would serve on after Shutdown
	})
	return &Upstream{URL: "http://" + addr, backend: b}
}

// upstreamBackend is a simulating Backend answering in style.
type upstreamBackend struct {
	server.Backend
	style    string
	encoding atomic.Int64
}

func (b *upstreamBackend) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	if b.style == UpstreamGRPC && binaryDataParams(req) {
		b.encoding.Add(1)
	}
	if b.style == UpstreamHTTPJSON {
		// kserve/server encodes the answer from req once Infer returns:
		// without these it answers in JSON.
		delete(req.Parameters, kserve.ParamBinaryDataOutput)
		for _, o := range req.Outputs {
			delete(o.Parameters, kserve.ParamBinaryData)
		}
	}
	resp, err := b.Backend.Infer(ctx, req)
	if err != nil || b.style != UpstreamGRPC {
		return resp, err
	}
	// A copy: the simulator may share its answers.
	out := *resp
	out.Outputs = slices.Clone(resp.Outputs)
	for i := range out.Outputs {
		o := &out.Outputs[i]
		o.Parameters = maps.Clone(o.Parameters)
		if o.Parameters == nil {
			o.Parameters = kserve.Parameters{}
		}
		o.Parameters[kserve.ParamBinaryDataSize] = int64(len(o.Data))
	}
	return &out, nil
}

// binaryDataParams reports whether req carries a binary extension parameter.
func binaryDataParams(req *kserve.InferRequest) bool {
	has := func(p kserve.Parameters) bool {
		return slices.ContainsFunc(slices.Collect(maps.Keys(p)), kserve.IsBinaryDataParam)
	}
	if has(req.Parameters) {
		return true
	}
	for _, in := range req.Inputs {
		if has(in.Parameters) {
			return true
		}
	}
	for _, o := range req.Outputs {
		if has(o.Parameters) {
			return true
		}
	}
	return false
}

package runner

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/kserve/server/servertest"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/target"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// seen is one request as a recording server saw it.
type seen struct {
	what, token, host string
}

// recorder serves servertest's model over HTTP and gRPC and records, for
// every request, its path (or method), its x-test-token header and its Host
// (:authority).
type recorder struct {
	mu   sync.Mutex
	reqs []seen
}

func (r *recorder) add(s seen) {
	r.mu.Lock()
	r.reqs = append(r.reqs, s)
	r.mu.Unlock()
}

func (r *recorder) take() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

func (r *recorder) grpcMD(ctx context.Context, method string) {
	md, _ := metadata.FromIncomingContext(ctx)
	s := seen{what: method}
	if v := md.Get("x-test-token"); len(v) > 0 {
		s.token = v[0]
	}
	if v := md.Get(":authority"); len(v) > 0 {
		s.host = v[0]
	}
	r.add(s)
}

func startRecorder(t *testing.T) (r *recorder, httpAddr, grpcAddr string) {
	t.Helper()
	r = &recorder{}
	b := servertest.NewModel(servertest.Answers[0].Answer)
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := server.NewHTTPHandler(b)
	hs := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		r.add(seen{what: string(ctx.Path()), token: string(ctx.Request.Header.Peek("X-Test-Token")), host: string(ctx.Host())})
		h.ServeFastHTTP(ctx)
	}}
	gs := server.NewGRPCServer(b,
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
			r.grpcMD(ctx, info.FullMethod)
			return next(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
			r.grpcMD(ss.Context(), info.FullMethod)
			return next(srv, ss)
		}))
	go hs.Serve(hl)
	go gs.Serve(gl)
	t.Cleanup(func() { gs.Stop(); hs.Shutdown() })
	return r, hl.Addr().String(), gl.Addr().String()
}

// shortSettings are a run of scenario small enough for a unit test.
func shortSettings(t *testing.T, sc trace.Scenario) loadgen.Settings {
	t.Helper()
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, sc, "")
	if err != nil {
		t.Fatal(err)
	}
	s.MinDurationMs, s.MinQueryCount, s.MaxDurationMs = 20, 8, 5000
	switch sc {
	case trace.Server:
		s.ServerTargetQPS, s.ServerTargetLatencyNs = 400, 100e6
	case trace.Offline:
		s.OfflineExpectedQPS = 200
	case trace.MultiStream:
		s.MultiStreamSamplesPerQuery = 4
	}
	return s
}

// TestHeadersOnEveryRequest: the run's headers reach the server on every
// request, probe and inferences, in every scenario, over both protocols and
// on all four clients; Host sets the HTTP Host header and :authority.
func TestHeadersOnEveryRequest(t *testing.T) {
	rec, httpAddr, grpcAddr := startRecorder(t)
	const token, host = "tok-3141", "model.example.com"
	hs := []Header{{Name: "X-Test-Token", Value: token, Shown: "<redacted>"}, {Name: "Host", Value: host, Shown: "<redacted>"}}
	for _, c := range []struct{ scheme, addr, httpClient, grpcClient string }{
		{"http", httpAddr, "loop", ""}, {"http", httpAddr, "pool", ""},
		{"grpc", grpcAddr, "", "loop"}, {"grpc", grpcAddr, "", "grpc"},
	} {
		for _, sc := range []trace.Scenario{trace.SingleStream, trace.MultiStream, trace.Server, trace.Offline} {
			name := c.scheme + "/" + c.httpClient + c.grpcClient + "/" + sc.String()
			spec := Spec{Target: c.scheme + "://" + c.addr, Model: servertest.ModelName, Settings: shortSettings(t, sc),
				HTTPClient: c.httpClient, GRPCClient: c.grpcClient, TotalSamples: 16, PerformanceSamples: 16, Headers: hs}
			out, err := Run(t.Context(), spec, Options{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if out.Result.SamplesFailed != 0 || out.Result.SamplesCompleted == 0 {
				t.Fatalf("%s: %d samples completed, %d failed: %v", name, out.Result.SamplesCompleted, out.Result.SamplesFailed, out.Result.Errors)
			}
			reqs := rec.take()
			infers, probes := 0, 0
			for _, r := range reqs {
				if r.token != token || r.host != host {
					t.Errorf("%s: %s came with token %q, host %q", name, r.what, r.token, r.host)
				}
				if strings.HasSuffix(r.what, "infer") || strings.HasSuffix(r.what, "ModelInfer") {
					infers++
				} else {
					probes++
				}
			}
			// The probe: live, server metadata, model metadata, ready, config.
			if infers == 0 || probes < 5 {
				t.Errorf("%s: %d inferences and %d probe requests recorded", name, infers, probes)
			}
		}
	}
}

// TestHeadersShownNeverSent: result.json, the LoadGen logs and the slog
// output show the headers' names and Shown, never their values.
func TestHeadersShownNeverSent(t *testing.T) {
	_, httpAddr, _ := startRecorder(t)
	const value = "Bearer never-shown-2718"
	dir := t.TempDir()
	var logs strings.Builder
	spec := Spec{Target: "http://" + httpAddr, Model: servertest.ModelName, Settings: shortSettings(t, trace.SingleStream),
		TotalSamples: 16, PerformanceSamples: 16, OutDir: dir,
		Headers: []Header{{Name: "Authorization", Value: value, Shown: "<redacted>"}, {Name: "X-Api-Key", Value: "key-1618", Shown: "@env:API_KEY"}}}
	out, err := Run(t.Context(), spec, Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out.Result.Headers, "|"); got != "Authorization: <redacted>|X-Api-Key: @env:API_KEY" {
		t.Errorf("result headers %q", got)
	}
	files := map[string]string{"slog": logs.String()}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	for name, body := range files {
		if strings.Contains(body, "never-shown-2718") || strings.Contains(body, "key-1618") {
			t.Errorf("%s shows a header value", name)
		}
	}
	for _, name := range []string{"result.json", "mlperf_log_summary.txt", "mlperf_log_detail.txt", "slog"} {
		if !strings.Contains(files[name], "Authorization: <redacted>") || !strings.Contains(files[name], "@env:API_KEY") {
			t.Errorf("%s does not show the headers as shown", name)
		}
	}
}

// TestProbeRefusals: an endpoint that refuses the credentials, and an
// ingress with no route for the Host, are named at the probe.
func TestProbeRefusals(t *testing.T) {
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var status atomic.Int64
	hs := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(int(status.Load()))
		ctx.SetBodyString(`{"error":"nope"}`)
	}}
	go hs.Serve(hl)
	t.Cleanup(func() { hs.Shutdown() })
	for _, c := range []struct {
		status int
		want   string
	}{
		{401, "the endpoint refused the credentials: HTTP 401"},
		{403, "the endpoint refused the credentials: HTTP 403"},
		{404, "no route: check the Host header"},
	} {
		status.Store(int64(c.status))
		spec := Spec{Target: "http://" + hl.Addr().String(), Model: "m", Settings: shortSettings(t, trace.SingleStream)}
		_, err := Run(t.Context(), spec, Options{})
		if !errors.Is(err, target.ErrTarget) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("HTTP %d: %v, want %q", c.status, err, c.want)
		}
	}
}

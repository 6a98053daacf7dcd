package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/kserve/server"
	"github.com/netloadgen/netloadgen/triton"
)

// fakeBackend serves "identity" (FP32 [-1,4] in, the same out), "words"
// (BYTES [-1] in, the same out) and "slow" (blocks until the request's
// context ends).
type fakeBackend struct {
	mu       sync.Mutex
	notReady bool
}

var identityMeta = kserve.ModelMetadata{
	Name: "identity", Versions: []string{"1"}, Platform: "fake",
	Inputs:  []kserve.TensorMetadata{{Name: "IN", Datatype: kserve.FP32, Shape: []int64{-1, 4}}},
	Outputs: []kserve.TensorMetadata{{Name: "OUT", Datatype: kserve.FP32, Shape: []int64{-1, 4}}},
}

var wordsMeta = kserve.ModelMetadata{
	Name: "words", Platform: "fake",
	Inputs:  []kserve.TensorMetadata{{Name: "W", Datatype: kserve.Bytes, Shape: []int64{-1}}},
	Outputs: []kserve.TensorMetadata{{Name: "W_OUT", Datatype: kserve.Bytes, Shape: []int64{-1}}},
}

var serverMeta = kserve.ServerMetadata{Name: "fake", Version: "0.1", Extensions: []string{kserve.ExtBinaryTensorData, kserve.ExtStatistics}}

func (f *fakeBackend) ServerLive(context.Context) bool { return true }
func (f *fakeBackend) ServerReady(context.Context) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.notReady
}
func (f *fakeBackend) ServerMetadata(context.Context) kserve.ServerMetadata { return serverMeta }

func (f *fakeBackend) meta(model, version string) (kserve.ModelMetadata, error) {
	switch {
	case model == "identity" && (version == "" || version == "1"):
		return identityMeta, nil
	case model == "words" && version == "":
		return wordsMeta, nil
	case model == "slow":
		return kserve.ModelMetadata{Name: "slow"}, nil
	}
	return kserve.ModelMetadata{}, kserve.Errorf(codes.NotFound, "unknown model %q version %q", model, version)
}

func (f *fakeBackend) ModelReady(_ context.Context, model, version string) (bool, error) {
	_, err := f.meta(model, version)
	return err == nil, err
}

func (f *fakeBackend) ModelMetadata(_ context.Context, model, version string) (kserve.ModelMetadata, error) {
	return f.meta(model, version)
}

func (f *fakeBackend) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	md, err := f.meta(req.Model, req.Version)
	if err != nil {
		return nil, err
	}
	if req.Model == "slow" {
		<-ctx.Done()
		return nil, kserve.Errorf(codes.Unavailable, "shutting down")
	}
	in, want := req.Inputs[0], md.Inputs[0]
	if len(req.Inputs) != 1 || in.Name != want.Name || in.Datatype != want.Datatype || len(in.Shape) != len(want.Shape) ||
		(len(want.Shape) == 2 && in.Shape[1] != want.Shape[1]) {
		return nil, kserve.Errorf(codes.InvalidArgument, "input %s %s %v does not match %+v", in.Name, in.Datatype, in.Shape, want)
	}
	out := kserve.Tensor{Name: md.Outputs[0].Name, Datatype: in.Datatype, Shape: in.Shape, Data: append([]byte(nil), in.Data...)}
	return &kserve.InferResponse{Model: req.Model, Version: "1", Outputs: []kserve.Tensor{out}}, nil
}

var fakeConfig = triton.ModelConfig{Name: "identity", Backend: "fake", MaxBatchSize: 8,
	Input:  []triton.ModelInput{{Name: "IN", DataType: "TYPE_FP32", Dims: []int64{4}}},
	Output: []triton.ModelOutput{{Name: "OUT", DataType: "TYPE_FP32", Dims: []int64{4}}}}

func (f *fakeBackend) ModelConfig(_ context.Context, model, version string) (triton.ModelConfig, error) {
	if _, err := f.meta(model, version); err != nil {
		return triton.ModelConfig{}, err
	}
	return fakeConfig, nil
}

func (f *fakeBackend) ModelStatistics(_ context.Context, model, version string) (triton.StatisticsResponse, error) {
	all := []triton.ModelStatistics{
		{Name: "identity", Version: "1", InferenceCount: 10, ExecutionCount: 5, InferenceStats: triton.InferStatistics{Success: triton.Duration{Count: 10, NS: 1000}}},
		{Name: "words", Version: "1", InferenceCount: 2},
	}
	if model == "" {
		return triton.StatisticsResponse{ModelStats: all}, nil
	}
	if _, err := f.meta(model, version); err != nil {
		return triton.StatisticsResponse{}, err
	}
	for _, s := range all {
		if s.Name == model {
			return triton.StatisticsResponse{ModelStats: []triton.ModelStatistics{s}}, nil
		}
	}
	return triton.StatisticsResponse{ModelStats: []triton.ModelStatistics{}}, nil
}

type observation struct {
	route, model string
	status       int
}

// startServer serves h's protocol on 127.0.0.1:0 and returns the base URL.
func startServer(t *testing.T, b server.Backend, opts ...server.HTTPHandlerOption) string {
	t.Helper()
	h := server.NewHTTPHandler(b, opts...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: h.ServeFastHTTP}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Shutdown(); <-done })
	return "http://" + ln.Addr().String()
}

func fp32(vs ...float32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func TestHTTPClientServerEveryMethod(t *testing.T) {
	fb := &fakeBackend{}
	var mu sync.Mutex
	var seen []observation
	base := startServer(t, fb, server.WithObserver(func(route, model string, status int, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, observation{route, model, status})
	}))
	for _, bin := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "binary"}[bin], func(t *testing.T) {
			ctx := context.Background()
			c, err := httpclient.New(base, httpclient.Binary(bin), httpclient.MaxConns(4))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			if live, err := c.ServerLive(ctx); !live || err != nil {
				t.Errorf("ServerLive = %v, %v", live, err)
			}
			if ready, err := c.ServerReady(ctx); !ready || err != nil {
				t.Errorf("ServerReady = %v, %v", ready, err)
			}
			if sm, err := c.ServerMetadata(ctx); err != nil || !reflect.DeepEqual(sm, serverMeta) {
				t.Errorf("ServerMetadata = %+v, %v", sm, err)
			}
			if md, err := c.ModelMetadata(ctx, "identity", "1"); err != nil || !reflect.DeepEqual(md, identityMeta) {
				t.Errorf("ModelMetadata = %+v, %v", md, err)
			}
			if ok, err := c.ModelReady(ctx, "identity", ""); !ok || err != nil {
				t.Errorf("ModelReady = %v, %v", ok, err)
			}
			if cfg, err := c.ModelConfig(ctx, "identity", ""); err != nil || !reflect.DeepEqual(cfg, fakeConfig) {
				t.Errorf("ModelConfig = %+v, %v", cfg, err)
			}
			if st, err := c.ModelStatistics(ctx, "identity", "1"); err != nil || len(st.ModelStats) != 1 || st.ModelStats[0].InferenceStats.Success.NS != 1000 {
				t.Errorf("ModelStatistics = %+v, %v", st, err)
			}
			if st, err := c.ModelStatistics(ctx, "", ""); err != nil || len(st.ModelStats) != 2 {
				t.Errorf("ModelStatistics(all) = %+v, %v", st, err)
			}

			req := &kserve.InferRequest{Model: "identity", Version: "1", ID: "abc", Inputs: []kserve.Tensor{
				{Name: "IN", Datatype: kserve.FP32, Shape: []int64{2, 4}, Data: fp32(1, 2, 3, 4, -1, -2, -3.5, 1e-3)}}}
			resp, err := c.Infer(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			want := kserve.Tensor{Name: "OUT", Datatype: kserve.FP32, Shape: []int64{2, 4}, Data: req.Inputs[0].Data}
			if resp.ID != "abc" || resp.Model != "identity" || len(resp.Outputs) != 1 || !reflect.DeepEqual(resp.Outputs[0], want) {
				t.Errorf("Infer = %+v", resp)
			}

			words := &kserve.InferRequest{Model: "words", Inputs: []kserve.Tensor{{Name: "W", Datatype: kserve.Bytes, Shape: []int64{3},
				Data: kserve.AppendBytesElement(kserve.AppendBytesElement(kserve.AppendBytesElement(nil, []byte("héllo")), nil), []byte(`"q"`))}}}
			p, err := c.PrepareInfer(words)
			if err != nil {
				t.Fatal(err)
			}
			if resp, err := c.InferPrepared(ctx, p); err != nil || !bytes.Equal(resp.Outputs[0].Data, words.Inputs[0].Data) {
				t.Errorf("InferPrepared = %+v, %v", resp, err)
			}
			if err := c.InferPreparedCheck(ctx, p); err != nil {
				t.Errorf("InferPreparedCheck = %v", err)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	wantSeen := map[observation]bool{
		{server.RouteServerLive, "", 200}: true, {server.RouteModelMetadata, "identity", 200}: true,
		{server.RouteInfer, "identity", 200}: true, {server.RouteModelStats, "", 200}: true, {server.RouteModelConfig, "identity", 200}: true,
	}
	for _, o := range seen {
		delete(wantSeen, o)
	}
	if len(wantSeen) > 0 {
		t.Errorf("observer never saw %v (saw %v)", wantSeen, seen)
	}
}

func TestHTTPErrors(t *testing.T) {
	fb := &fakeBackend{}
	base := startServer(t, fb)
	ctx := context.Background()
	c, err := httpclient.New(base)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wrongShape := &kserve.InferRequest{Model: "identity", Inputs: []kserve.Tensor{{Name: "IN", Datatype: kserve.FP32, Shape: []int64{1, 2}, Data: fp32(1, 2)}}}
	unknown := &kserve.InferRequest{Model: "nope", Inputs: wrongShape.Inputs}

	tests := []struct {
		name   string
		call   func() error
		want   error
		status int
	}{
		{"metadata of unknown model", func() error { _, err := c.ModelMetadata(ctx, "nope", ""); return err }, kserve.ErrNotFound, 404},
		{"unknown version", func() error { _, err := c.ModelMetadata(ctx, "identity", "7"); return err }, kserve.ErrNotFound, 404},
		{"ready of unknown model", func() error { _, err := c.ModelReady(ctx, "nope", ""); return err }, kserve.ErrNotFound, 404},
		{"config of unknown model", func() error { _, err := c.ModelConfig(ctx, "nope", ""); return err }, kserve.ErrNotFound, 404},
		{"stats of unknown model", func() error { _, err := c.ModelStatistics(ctx, "nope", ""); return err }, kserve.ErrNotFound, 404},
		{"infer unknown model", func() error { _, err := c.Infer(ctx, unknown); return err }, kserve.ErrNotFound, 404},
		{"infer wrong shape", func() error { _, err := c.Infer(ctx, wrongShape); return err }, kserve.ErrInvalidArgument, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var ke *kserve.Error
			if !errors.Is(err, tt.want) || !errors.As(err, &ke) || ke.HTTPStatus != tt.status || ke.Message == "" {
				t.Errorf("err %v (%#v), want %v with HTTP %d and a message", err, ke, tt.want, tt.status)
			}
		})
	}

	fb.mu.Lock()
	fb.notReady = true
	fb.mu.Unlock()
	if ready, err := c.ServerReady(ctx); ready || err != nil {
		t.Errorf("ServerReady when not ready = %v, %v; want false, nil", ready, err)
	}
}

// post sends a raw request with net/http, to check what the server answers on the wire.
func post(t *testing.T, url string, header map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestHTTPInferWire(t *testing.T) {
	base := startServer(t, &fakeBackend{})
	data := fp32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)

	t.Run("raw body for a single-input model", func(t *testing.T) {
		resp, body := post(t, base+"/v2/models/identity/infer", map[string]string{kserve.HeaderInferenceContentLength: "0"}, data)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		n, err := strconv.Atoi(resp.Header.Get(kserve.HeaderInferenceContentLength))
		if err != nil {
			t.Fatalf("no binary response header: %v", resp.Header)
		}
		got, err := kserve.DecodeInferResponse(body, n)
		if err != nil {
			t.Fatal(err)
		}
		if o := got.Outputs[0]; !reflect.DeepEqual(o.Shape, []int64{3, 4}) || !bytes.Equal(o.Data, data) {
			t.Errorf("output %+v, want shape [3 4] (batch inferred) and the input data", o)
		}
	})
	t.Run("binary request, JSON response when not asked for binary", func(t *testing.T) {
		req := &kserve.InferRequest{Inputs: []kserve.Tensor{{Name: "IN", Datatype: kserve.FP32, Shape: []int64{3, 4}, Data: data}},
			Outputs: []kserve.RequestedOutput{{Name: "OUT", Parameters: kserve.Parameters{kserve.ParamBinaryData: false}}}}
		body, n, err := kserve.EncodeInferRequest(nil, req, true)
		if err != nil {
			t.Fatal(err)
		}
		// Encoding binary marks outputs binary_data=true unless set: here it is set false.
		resp, out := post(t, base+"/v2/models/identity/infer", map[string]string{kserve.HeaderInferenceContentLength: strconv.Itoa(n)}, body)
		if resp.StatusCode != 200 || resp.Header.Get(kserve.HeaderInferenceContentLength) != "" || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d, headers %v: %s", resp.StatusCode, resp.Header, out)
		}
		if !strings.Contains(string(out), `"data":[1,2,3,4,5,6,7,8,9,10,11,12]`) {
			t.Errorf("JSON response %s lacks the data", out)
		}
	})
	t.Run("raw body for a model without a single input", func(t *testing.T) {
		resp, body := post(t, base+"/v2/models/slow/infer", map[string]string{kserve.HeaderInferenceContentLength: "0"}, data)
		if resp.StatusCode != 400 || !strings.Contains(string(body), `"error"`) {
			t.Errorf("status %d body %s; want 400 with an error", resp.StatusCode, body)
		}
	})
	errorCases := []struct {
		name, path, method string
		header             map[string]string
		body               string
		status             int
	}{
		{"malformed JSON", "/v2/models/identity/infer", "POST", nil, `{"inputs":`, 400},
		{"bad header length", "/v2/models/identity/infer", "POST", map[string]string{kserve.HeaderInferenceContentLength: "x"}, `{}`, 400},
		{"header length beyond body", "/v2/models/identity/infer", "POST", map[string]string{kserve.HeaderInferenceContentLength: "99"}, `{}`, 400},
		{"GET on infer", "/v2/models/identity/infer", "GET", nil, ``, 405},
		{"unknown path", "/v3", "GET", nil, ``, 404},
		{"unknown action", "/v2/models/identity/explain", "POST", nil, ``, 404},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.HasPrefix(string(b), `{"error":"`) {
				t.Errorf("status %d body %s; want %d with {\"error\": ...}", resp.StatusCode, b, tt.status)
			}
		})
	}
}

func TestHTTPHealthTritonStyle(t *testing.T) {
	fb := &fakeBackend{notReady: true}
	base := startServer(t, fb)
	for path, want := range map[string]int{"/v2/health/live": 200, "/v2/health/ready": 400} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || len(b) != 0 {
			t.Errorf("%s: %d %q, want %d with an empty body", path, resp.StatusCode, b, want)
		}
	}
}

func TestHTTPFallbackAndVersionRoutes(t *testing.T) {
	base := startServer(t, &fakeBackend{}, server.WithFallback(func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/metrics" {
			ctx.SetBodyString("metrics here")
			return
		}
		ctx.SetStatusCode(418)
	}))
	for path, want := range map[string]int{"/metrics": 200, "/elsewhere": 418, "/v2/models/identity/versions/1": 200,
		"/v2/models/identity/versions/1/ready": 200, "/v2/models/identity/versions/1/config": 200, "/v2/models/identity/versions/1/stats": 200,
		"/v2/models/stats": 200, "/v2": 200} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

func TestHTTPClientContextDeadline(t *testing.T) {
	base := startServer(t, &fakeBackend{})
	c, err := httpclient.New(base)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = c.Infer(ctx, &kserve.InferRequest{Model: "slow", Inputs: []kserve.Tensor{{Name: "x", Datatype: kserve.Uint8, Shape: []int64{1}, Data: []byte{1}}}})
	if !errors.Is(err, kserve.ErrTransport) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want ErrTransport and DeadlineExceeded", err)
	}
}

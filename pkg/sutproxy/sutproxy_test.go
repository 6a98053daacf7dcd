package sutproxy_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// startSim starts sutproxy with the built-in models on loopback ports the
// kernel picks.
func startSim(t testing.TB, models ...sim.ModelSpec) *sutproxy.Proxy {
	t.Helper()
	p, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", Models: models})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// client is what the interop tests ask of both transports.
type client interface {
	ServerLive(ctx context.Context) (bool, error)
	ServerReady(ctx context.Context) (bool, error)
	ServerMetadata(ctx context.Context) (kserve.ServerMetadata, error)
	ModelMetadata(ctx context.Context, model, version string) (kserve.ModelMetadata, error)
	ModelReady(ctx context.Context, model, version string) (bool, error)
	Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error)
	Close() error
}

func clients(t *testing.T, p *sutproxy.Proxy) map[string]client {
	t.Helper()
	out := map[string]client{}
	for name, binary := range map[string]bool{"http-json": false, "http-binary": true} {
		c, err := httpclient.New("http://"+p.HTTPAddr(), httpclient.Binary(binary))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = c
	}
	g, err := grpcclient.New(p.GRPCAddr())
	if err != nil {
		t.Fatal(err)
	}
	out["grpc"] = g
	for _, c := range out {
		t.Cleanup(func() { c.Close() })
	}
	return out
}

func int32s(vs ...int32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

func seq(from, step int32) []int32 {
	out := make([]int32, 16)
	for i := range out {
		out[i] = from + int32(i)*step
	}
	return out
}

func TestDefaultModelsOverEveryTransport(t *testing.T) {
	p := startSim(t)
	for name, c := range clients(t, p) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if live, err := c.ServerLive(ctx); err != nil || !live {
				t.Fatalf("ServerLive = %v, %v", live, err)
			}
			if ready, err := c.ServerReady(ctx); err != nil || !ready {
				t.Fatalf("ServerReady = %v, %v", ready, err)
			}
			md, err := c.ServerMetadata(ctx)
			if err != nil || md.Name != "sutproxy" || !strings.Contains(strings.Join(md.Extensions, ","), kserve.ExtBinaryTensorData) {
				t.Fatalf("ServerMetadata = %+v, %v", md, err)
			}
			mm, err := c.ModelMetadata(ctx, "simple", "")
			if err != nil || len(mm.Inputs) != 2 || mm.Inputs[0].Name != "INPUT0" || mm.Inputs[0].Datatype != kserve.Int32 {
				t.Fatalf("ModelMetadata(simple) = %+v, %v", mm, err)
			}

			a, b := seq(0, 1), seq(100, -3)
			resp, err := c.Infer(ctx, &kserve.InferRequest{Model: "simple", ID: "req-7", Inputs: []kserve.Tensor{
				{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: int32s(a...)},
				{Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: int32s(b...)},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.ID != "req-7" {
				t.Errorf("response id %q, want the request's", resp.ID)
			}
			sum, diff := make([]int32, 16), make([]int32, 16)
			for i := range a {
				sum[i], diff[i] = a[i]+b[i], a[i]-b[i]
			}
			got := map[string][]byte{}
			for _, o := range resp.Outputs {
				got[o.Name] = o.Data
			}
			if string(got["OUTPUT0"]) != string(int32s(sum...)) || string(got["OUTPUT1"]) != string(int32s(diff...)) {
				t.Errorf("simple outputs = %v, want sum and difference of the inputs", got)
			}

			_, err = c.Infer(ctx, &kserve.InferRequest{Model: "no-such-model", Inputs: []kserve.Tensor{
				{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: make([]byte, 64)}}})
			if !errors.Is(err, kserve.ErrNotFound) {
				t.Errorf("unknown model: err = %v, want NotFound", err)
			}
			_, err = c.Infer(ctx, &kserve.InferRequest{Model: "identity", Inputs: []kserve.Tensor{
				{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 15}, Data: make([]byte, 60)}}})
			if !errors.Is(err, kserve.ErrInvalidArgument) {
				t.Errorf("wrong shape: err = %v, want InvalidArgument", err)
			}
		})
	}
}

func TestHTTPStatusCodes(t *testing.T) {
	p := startSim(t)
	base := "http://" + p.HTTPAddr()
	cases := []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/v2/health/live", "", 200},
		{"GET", "/v2/models/nope", "", 404},
		{"POST", "/v2/models/nope/infer", `{"inputs":[]}`, 404},
		{"POST", "/v2/models/identity/infer", `{"inputs":[{"name":"INPUT0","shape":[1,15],"datatype":"FP32","data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]}]}`, 400},
		{"POST", "/v2/models/identity/infer", `{"inputs":`, 400},
	}
	for _, tc := range cases {
		req, _ := http.NewRequestWithContext(t.Context(), tc.method, base+tc.path, strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: status %d, want %d (%s)", tc.method, tc.path, resp.StatusCode, tc.want, body)
		}
		if tc.want >= 400 && !strings.Contains(string(body), `"error"`) {
			t.Errorf("%s %s: error body %s has no \"error\" field", tc.method, tc.path, body)
		}
	}
}

// A Close right after Start, before the serving goroutines have run, ends
// both servers: each Serve returns (Wait gets both) and nothing listens on
// the ports any more. The goroutines once read the servers from fields
// Close had cleared (a nil gRPC server panicked in Serve), and fasthttp's
// shutdown does not close a listener its Serve has not taken up yet.
func TestCloseRightAfterStartEndsBothServers(t *testing.T) {
	for i := range 50 {
		p, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		httpAddr, grpcAddr := p.HTTPAddr(), p.GRPCAddr()
		if err := p.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", i, err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		for range 2 {
			_ = p.Wait(ctx) // a server's own error, or nil: either way it returned
		}
		waited := ctx.Err()
		cancel()
		if waited != nil {
			t.Fatalf("round %d: a server still serves after Close", i)
		}
		for _, a := range []string{httpAddr, grpcAddr} {
			if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
				c.Close()
				t.Fatalf("round %d: %s still accepts connections after Close", i, a)
			}
		}
	}
}

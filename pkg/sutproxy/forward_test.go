package sutproxy_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// A front forwarding to two simulated servers, one over HTTP and one over
// gRPC: requests reach the upstreams, statistics add up across them, errors
// keep their status, and per-upstream counters show on /metrics.
func TestForwardingFront(t *testing.T) {
	a, b := startSim(t), startSim(t)
	upA, upB := "http://"+a.HTTPAddr(), "grpc://"+b.GRPCAddr()
	front, err := sutproxy.Start(t.Context(), sutproxy.Config{
		HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", Upstreams: []string{upA, upB},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close() })

	for name, c := range clients(t, front) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			if ready, err := c.ServerReady(ctx); err != nil || !ready {
				t.Fatalf("ServerReady = %v, %v", ready, err)
			}
			const n = 20
			for i := range n {
				data := int32s(seq(int32(i), 1)...)
				// identity takes FP32; the bytes of the int32 sequence are a fine FP32 payload to echo.
				resp, err := c.Infer(ctx, &kserve.InferRequest{Model: "identity", Inputs: []kserve.Tensor{
					{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: data}}})
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.Outputs) != 1 || string(resp.Outputs[0].Data) != string(data) {
					t.Fatalf("identity through the front did not echo its input: %+v", resp.Outputs)
				}
			}
			_, err := c.ModelMetadata(ctx, "no-such-model", "")
			if !errors.Is(err, kserve.ErrNotFound) {
				t.Errorf("unknown model through the front: %v, want NotFound", err)
			}
		})
	}

	// 3 transports × 20 requests went through the front; the summed
	// statistics of the two upstreams must count all of them.
	st, err := front.Backend().ModelStatistics(t.Context(), "identity", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.ModelStats) != 1 || st.ModelStats[0].InferenceStats.Success.Count != 60 {
		t.Fatalf("summed statistics = %+v, want 60 successes", st)
	}
	sa, _ := a.Backend().ModelStatistics(t.Context(), "identity", "")
	sb, _ := b.Backend().ModelStatistics(t.Context(), "identity", "")
	ca, cb := sa.ModelStats[0].InferenceStats.Success.Count, sb.ModelStats[0].InferenceStats.Success.Count
	if ca+cb != 60 || ca == 0 || cb == 0 {
		t.Errorf("upstream successes %d + %d: want both used, 60 in all", ca, cb)
	}

	resp, err := http.Get("http://" + front.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, up := range []string{upA, upB} {
		want := `sutproxy_upstream_requests_total{outcome="ok",upstream="` + up + `"}`
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestStartRejectsBadUpstream(t *testing.T) {
	for _, u := range []string{"ftp://x:1", "http://", "not a url"} {
		_, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "off", Upstreams: []string{u}})
		if err == nil || !strings.Contains(err.Error(), "--upstream") {
			t.Errorf("upstream %q: err = %v, want an error naming --upstream", u, err)
		}
	}
}

package sutproxy_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
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

// The HTTP front answers in the encoding its client asked for, whatever the
// upstream used: a JSON answer never carries binary_data_size, though a gRPC
// upstream (as the KServe Python server does) or a binary HTTP one framed its
// own answer with it; a binary answer carries its own sizes.
func TestForwardedAnswerInTheClientsEncoding(t *testing.T) {
	const input = `{"name":"INPUT0","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}`
	want := fp32s(1, 2, 3, 4)
	for _, style := range []string{sutproxytest.UpstreamGRPC, sutproxytest.UpstreamHTTP} {
		t.Run(style, func(t *testing.T) {
			up := sutproxytest.StartUpstream(t, style, "name=echo4,fn=echo,dtype=FP32,dims=4,max_batch=2")
			url := "http://" + sutproxytest.StartForward(t, up.URL).HTTPAddr() + "/v2/models/echo4/infer"
			for _, tc := range []struct {
				name, body string
				binary     bool
			}{
				{"json", `{"inputs":[` + input + `]}`, false},
				{"json asked per output", `{"inputs":[` + input + `],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":false}}]}`, false},
				{"binary", `{"parameters":{"binary_data_output":true},"inputs":[` + input + `]}`, true},
			} {
				resp, err := http.Post(url, "application/json", strings.NewReader(tc.body))
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: status %d, %v: %s", tc.name, resp.StatusCode, err, body)
				}
				jsonLen := -1
				if h := resp.Header.Get(kserve.HeaderInferenceContentLength); h != "" {
					if jsonLen, err = strconv.Atoi(h); err != nil {
						t.Fatalf("%s: %s %q", tc.name, kserve.HeaderInferenceContentLength, h)
					}
				}
				if (jsonLen >= 0) != tc.binary {
					t.Fatalf("%s: %s %d, want binary %v", tc.name, kserve.HeaderInferenceContentLength, jsonLen, tc.binary)
				}
				if !tc.binary && bytes.Contains(body, []byte(kserve.ParamBinaryDataSize)) {
					t.Errorf("%s: the JSON answer carries %s: %s", tc.name, kserve.ParamBinaryDataSize, body)
				}
				got, err := kserve.DecodeInferResponse(body, jsonLen)
				if err != nil {
					t.Fatalf("%s: %v: %s", tc.name, err, body)
				}
				if len(got.Outputs) != 1 || got.Outputs[0].Parameters != nil || !bytes.Equal(got.Outputs[0].Data, want) {
					t.Errorf("%s: outputs %+v, want OUTPUT0 holding %x", tc.name, got.Outputs, want)
				}
			}
			if n := up.EncodingRequests(); n != 0 {
				t.Errorf("%d requests reached the upstream with the client's binary_data parameters", n)
			}
		})
	}
}

func fp32s(vs ...float32) []byte {
	b := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func TestStartRejectsBadUpstream(t *testing.T) {
	for _, u := range []string{"ftp://x:1", "http://", "not a url"} {
		_, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "off", Upstreams: []string{u}})
		if err == nil || !strings.Contains(err.Error(), "--upstream") {
			t.Errorf("upstream %q: err = %v, want an error naming --upstream", u, err)
		}
	}
}

package sutproxy_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// TestRequestSizeCap: one cap on a request's size for both fronts (#12:
// gRPC took 2 GiB messages where HTTP stopped at 256 MiB, and a 300 MB one
// left sutproxy's RSS at 1.1 GB). Over it, gRPC answers ResourceExhausted
// and HTTP 413, before the backend sees anything; under it, requests pass.
func TestRequestSizeCap(t *testing.T) {
	const maxBytes = 4096
	p, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", MaxRequestBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })

	conn, err := grpc.NewClient(p.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := inferencepb.NewGRPCInferenceServiceClient(conn)
	infer := func(n int) error {
		_, err := c.ModelInfer(t.Context(), &inferencepb.ModelInferRequest{
			ModelName: "identity",
			Inputs: []*inferencepb.ModelInferRequest_InferInputTensor{
				{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, int64(n / 4)}},
			},
			RawInputContents: [][]byte{make([]byte, n)},
		})
		return err
	}
	if err := infer(64); err != nil {
		t.Fatalf("a request under the cap: %v", err)
	}
	if err := infer(2 * maxBytes); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("gRPC request of %d bytes over a cap of %d: %v, want ResourceExhausted", 2*maxBytes, maxBytes, err)
	}

	url := "http://" + p.HTTPAddr() + "/v2/models/identity/infer"
	resp, err := http.Post(url, "application/json", bytes.NewReader(make([]byte, 2*maxBytes)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"error"`) {
		t.Errorf("HTTP request of %d bytes over a cap of %d: status %d (%s), want 413 with an error body", 2*maxBytes, maxBytes, resp.StatusCode, body)
	}
}

func TestRequestSizeCapDefault(t *testing.T) {
	if sutproxy.DefaultMaxRequestBytes != 256<<20 {
		t.Errorf("DefaultMaxRequestBytes = %d, want 256 MiB", sutproxy.DefaultMaxRequestBytes)
	}
}

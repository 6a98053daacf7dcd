package httpclient

import (
	"context"
	"errors"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/kserve"
)

// TestRedirectIsAnAnswer: a 3xx to any request (health, metadata, config,
// inference) is an error carrying the status and the Location resolved
// against the request's URL (prefix included; a password in it
// redacted), and the client sends
// nothing to the Location, with the run's Authorization set or not.
func TestRedirectIsAnAnswer(t *testing.T) {
	witness, heard := testtool.RawHTTP(t, testtool.Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	for _, c := range []struct {
		status, loc string
		code        int
		want        func(path string) string // the Location expected for a request for path
	}{
		{"302 Found", "http://" + witness + "/v2/x", 302, func(string) string { return "http://" + witness + "/v2/x" }},
		{"307 Temporary Redirect", "http://" + witness + "/v2/x", 307, func(string) string { return "http://" + witness + "/v2/x" }},
		{"301 Moved Permanently", "moved", 301, nil},
		{"303 See Other", "http://u:pw@" + witness + "/v2/x", 303, func(string) string { return "http://u:xxxxx@" + witness + "/v2/x" }},
	} {
		t.Run(c.status, func(t *testing.T) {
			addr, _ := testtool.RawHTTP(t, testtool.Answer("HTTP/1.1 "+c.status+"\r\nLocation: "+c.loc+"\r\nContent-Length: 0\r\n\r\n"))
			cl, err := New("http://"+addr+"/p", Headers([]kserve.Header{{Name: "Authorization", Value: "Bearer sk-run-secret"}}))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			want := c.want
			if want == nil {
				want = func(path string) string {
					return "http://" + addr + "/p" + path[:len(path)-len(lastSegment(path))] + "moved"
				}
			}
			p, err := cl.PrepareInfer(&kserve.InferRequest{Model: "m", Inputs: []kserve.Tensor{{Name: "I", Datatype: kserve.FP32, Shape: []int64{1}, Data: make([]byte, 4)}}})
			if err != nil {
				t.Fatal(err)
			}
			calls := []struct {
				path string
				call func(ctx context.Context) error
			}{
				{"/v2/health/live", func(ctx context.Context) error { _, err := cl.ServerLive(ctx); return err }},
				{"/v2", func(ctx context.Context) error { _, err := cl.ServerMetadata(ctx); return err }},
				{"/v2/models/m", func(ctx context.Context) error { _, err := cl.ModelMetadata(ctx, "m", ""); return err }},
				{"/v2/models/m/ready", func(ctx context.Context) error { _, err := cl.ModelReady(ctx, "m", ""); return err }},
				{"/v2/models/m/config", func(ctx context.Context) error { _, err := cl.ModelConfig(ctx, "m", ""); return err }},
				{"/v2/models/m/infer", func(ctx context.Context) error { _, err := cl.InferPrepared(ctx, p); return err }},
				{"/v2/models/m/infer", func(ctx context.Context) error { return cl.InferPreparedCheck(ctx, p) }},
			}
			for _, k := range calls {
				err := k.call(t.Context())
				ke, ok := errors.AsType[*kserve.Error](err)
				if !ok || ke.HTTPStatus != c.code || ke.Location != want(k.path) {
					t.Errorf("%s: %#v: want a *kserve.Error, HTTP %d, Location %s", k.path, err, c.code, want(k.path))
				}
			}
			if n := heard.Load(); n != 0 {
				t.Errorf("the Location got %d requests, want none", n)
			}
		})
	}
}

func lastSegment(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

package sutproxy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testtool"
	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/sutproxy"
)

// TestForwardDoesNotFollowRedirects: an upstream that answers the
// forwarding front (health, metadata, inference) with a 302 to another host, or a 307 to another port of
// the same host, gets its answer passed on as an error; the front sends
// nothing to the Location.
func TestForwardDoesNotFollowRedirects(t *testing.T) {
	witness, heard := testtool.RawHTTP(t, testtool.Answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	for _, status := range []string{"302 Found", "307 Temporary Redirect"} {
		t.Run(status, func(t *testing.T) {
			up, _ := testtool.RawHTTP(t, testtool.Answer("HTTP/1.1 "+status+"\r\nLocation: http://"+witness+"/v2/models/identity/infer\r\nContent-Length: 0\r\n\r\n"))
			front, err := sutproxy.Start(t.Context(), sutproxy.Config{HTTPAddr: "127.0.0.1:0", Upstreams: []string{"http://" + up}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { front.Close() })
			c, err := httpclient.New("http://" + front.HTTPAddr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Infer(t.Context(), &kserve.InferRequest{Model: "identity", Inputs: []kserve.Tensor{
				{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 1}, Data: make([]byte, 4)}}})
			loc := "http://" + witness + "/v2/models/identity/infer"
			if ke, ok := errors.AsType[*kserve.Error](err); !ok || !strings.Contains(ke.Message, "redirects to "+loc) {
				t.Errorf("infer through the front: %v: want the upstream's redirect as an error answer naming %s", err, loc)
			}
			if _, err := c.ModelMetadata(t.Context(), "identity", ""); err == nil {
				t.Error("model metadata through the front passed: want the upstream's redirect as an error")
			}
			if ready, _ := c.ServerReady(t.Context()); ready {
				t.Error("the front says it is ready: want its upstream's redirect taken as not ready")
			}
			if n := heard.Load(); n != 0 {
				t.Errorf("the redirect's target got %d requests, want none", n)
			}
		})
	}
}

package sutproxy_test

import (
	"errors"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/grpcclient"
	"github.com/netloadgen/netloadgen/pkg/sutproxy/sutproxytest"
)

// TestRequireHostAndHeader: a front that routes by Host and wants a header
// refuses every request without them, metadata endpoints included, over
// both protocols, and serves those with them; /metrics stays open.
func TestRequireHostAndHeader(t *testing.T) {
	const host = "model.example.com"
	p := sutproxytest.StartFront(t, host, []kserve.Header{{Name: "Authorization", Value: "Bearer k"}})
	get := func(path, hostHdr, auth string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+p.HTTPAddr()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = hostHdr
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, host, auth string
		want             int
	}{
		{"/v2/health/live", host, "Bearer k", 200},
		{"/v2", host + ":8000", "Bearer k", 200},
		{"/v2/health/live", host, "", 401},
		{"/v2", host, "Bearer wrong", 401},
		{"/v2/health/live", "other.example.com", "Bearer k", 404},
		{"/metrics", "other.example.com", "", 200},
	} {
		if got := get(c.path, c.host, c.auth); got != c.want {
			t.Errorf("GET %s (Host %s, Authorization %q) = %d, want %d", c.path, c.host, c.auth, got, c.want)
		}
	}
	for _, c := range []struct {
		name    string
		headers []kserve.Header
		want    error
	}{
		{"both", []kserve.Header{{Name: "Host", Value: host}, {Name: "Authorization", Value: "Bearer k"}}, nil},
		{"no token", []kserve.Header{{Name: "Host", Value: host}}, &kserve.Error{Code: codes.Unauthenticated}},
		{"other host", []kserve.Header{{Name: "Host", Value: "other"}, {Name: "Authorization", Value: "Bearer k"}}, kserve.ErrUnimplemented},
	} {
		g, err := grpcclient.New(p.GRPCAddr(), grpcclient.WithHeaders(c.headers))
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.ServerMetadata(t.Context())
		g.Close()
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("gRPC %s: %v, want %v", c.name, err, c.want)
		}
	}
}

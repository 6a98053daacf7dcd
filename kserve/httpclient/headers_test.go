package httpclient

import (
	"net"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/netloadgen/netloadgen/kserve"
)

// TestHeadersOnEveryRequest: the client's headers and Host go on the probe's
// requests, the repository index and prepared inferences alike.
func TestHeadersOnEveryRequest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string][2]string{} // path: token, host
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		got[string(ctx.Path())] = [2]string{string(ctx.Request.Header.Peek("Authorization")), string(ctx.Host())}
		mu.Unlock()
		switch string(ctx.Path()) {
		case "/v2/repository/index":
			ctx.SetBodyString(`[{"name":"a"}]`)
		case "/v2":
			ctx.SetBodyString(`{"name":"s","version":"1","extensions":[]}`)
		}
	}}
	go srv.Serve(ln)
	defer srv.Shutdown()
	c, err := New("http://"+ln.Addr().String(), Headers([]kserve.Header{{Name: "Authorization", Value: "Bearer t"}, {Name: "host", Value: "ingress.example.com"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	if _, err := c.ServerLive(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerMetadata(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RepositoryIndex(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, path := range []string{"/v2/health/live", "/v2", "/v2/repository/index"} {
		if got[path] != [2]string{"Bearer t", "ingress.example.com"} {
			t.Errorf("%s: Authorization and Host %q", path, got[path])
		}
	}
}

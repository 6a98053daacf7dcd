package runner

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc"
)

// TestOtherProtocol: a port that speaks the other transport is recognised
// from its first bytes; a port that speaks neither is not.
func TestOtherProtocol(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	defer hs.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	go gs.Serve(ln)
	defer gs.Stop()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	httpAddr := hs.Listener.Addr().String()
	for _, c := range []struct{ scheme, host, want string }{
		{"http", ln.Addr().String(), "grpc"},
		{"grpc", httpAddr, "http"},
		{"http", httpAddr, ""},
		{"grpc", ln.Addr().String(), ""},
		{"http", silent.Addr().String(), ""},
		{"grpc", silent.Addr().String(), ""},
	} {
		if got := otherProtocol(t.Context(), c.scheme, c.host); got != c.want {
			t.Errorf("%s://%s: %q, want %q", c.scheme, c.host, got, c.want)
		}
	}
}

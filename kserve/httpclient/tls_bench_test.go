package httpclient

import (
	"net"
	"net/http"
	"testing"
)

// The cost of TLS on one keep-alive connection, server in the same process
// (its CPU counted too): one GET /v2/health/live round trip at a time,
// plain text and TLS 1.3 (AES-GCM) side by side.
//
//	go test ./kserve/httpclient -run '^$' -bench HealthRoundTrip -benchmem
func BenchmarkHealthRoundTripPlain(b *testing.B) { benchHealth(b, false) }
func BenchmarkHealthRoundTripTLS(b *testing.B)   { benchHealth(b, true) }

func benchHealth(b *testing.B, secure bool) {
	var ln net.Listener
	var opts []Option
	scheme := "http://"
	if secure {
		l, c := tlsListener(b)
		ln, opts, scheme = l, []Option{TLS(c)}, "https://"
	} else {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ln = l
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	c, err := New(scheme+"localhost:"+port, append(opts, MaxConns(1))...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.ServerLive(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

package httpclient

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/internal/testcert"
)

// tlsListener is a loopback TLS listener with a certificate for localhost
// signed by a fresh CA, and the client configuration that trusts it.
func tlsListener(t testing.TB) (net.Listener, *tls.Config) {
	t.Helper()
	ca := testcert.NewCA(t, "test-ca")
	srv := ca.Server(t, "server", "localhost")
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := tls.NewListener(raw, &tls.Config{Certificates: []tls.Certificate{srv.TLS(t)}, MinVersion: tls.VersionTLS12})
	return ln, &tls.Config{RootCAs: ca.Pool()}
}

// TestTLSPathPrefixAndDefaultHost: an https:// base URL with a path prefix
// puts the prefix on every request, over TLS, with the URL's host as the
// Host header and as the name checked.
func TestTLSPathPrefixAndDefaultHost(t *testing.T) {
	ln, cfg := tlsListener(t)
	var mu sync.Mutex
	var seen []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Host+r.URL.Path+" tls="+map[bool]string{true: "yes", false: "no"}[r.TLS != nil])
		mu.Unlock()
		if r.URL.Path != "/serving/team-a/v2/health/live" {
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	c, err := New("https://localhost:"+port+"/serving/team-a", TLS(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if live, err := c.ServerLive(t.Context()); !live || err != nil {
		t.Fatalf("ServerLive = %v, %v", live, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "localhost:" + port + "/serving/team-a/v2/health/live tls=yes"; len(seen) != 1 || seen[0] != want {
		t.Errorf("server saw %q, want [%q]", seen, want)
	}
	// Without the CA, the certificate is refused by the handshake.
	c2, err := New("https://localhost:" + port)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.ServerLive(t.Context()); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("without the CA: %v, want an unknown authority", err)
	}
}

// TestTLSIdleProbe: over TLS, the look at an idle pooled connection's
// socket tells a server's close (its close_notify alert, then the end of
// the stream) from a connection alive and quiet, opened ahead of the run
// (Preconnect) or by a request.
func TestTLSIdleProbe(t *testing.T) {
	for _, c := range []struct {
		name    string
		perConn int
		close   bool
		retries uint64
		conns   int
	}{
		{"server-closed", 1, true, 1, 2},
		{"alive", 0, false, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln, cfg := tlsListener(t)
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			s := startScriptedOn(t, ln, "https://localhost:"+port, c.perConn, always)
			cl, err := New(s.url, MaxConns(1), TLS(cfg))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if err := cl.Preconnect(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			if live, err := cl.ServerLive(t.Context()); !live || err != nil {
				t.Fatalf("first request: %v, %v", live, err)
			}
			if c.close {
				<-s.closed // the pooled connection is closed by the server
			}
			if live, err := cl.ServerLive(t.Context()); !live || err != nil {
				t.Fatalf("second request: %v, %v", live, err)
			}
			if accepted, requests := s.counts(); cl.Retries() != c.retries || accepted != c.conns || requests != 2 {
				t.Errorf("retries %d, connections %d, requests %d; want %d, %d, 2", cl.Retries(), accepted, requests, c.retries, c.conns)
			}
		})
	}
}

// TestDefaultPorts: a base URL without a port dials the scheme's: 80 for
// http://, 443 for https://; the Host header stays as written.
func TestDefaultPorts(t *testing.T) {
	for _, c := range []struct{ url, addr, host string }{
		{"http://h", "h:80", "h"}, {"https://h/p", "h:443", "h"}, {"https://h:8443", "h:8443", "h:8443"}, {"https://[::1]", "[::1]:443", "[::1]"},
	} {
		cl, err := New(c.url)
		if err != nil {
			t.Fatal(err)
		}
		if cl.pool.addr != c.addr || (cl.pool.tls != nil) != strings.HasPrefix(c.url, "https") || cl.host != c.host {
			t.Errorf("%s: dials %s (tls %v), Host %s; want %s, Host %s", c.url, cl.pool.addr, cl.pool.tls != nil, cl.host, c.addr, c.host)
		}
	}
}

// TestDialsCapped: requests that find no idle connection open at most
// maxDialing connections at once, whatever their number: here 32 requests
// meet a server whose handshakes never finish, and only maxDialing of the
// handshakes ever begin (uncapped, each request opened its own: a burst
// against a TLS server bought one handshake per waiting request, and the
// server, busy with them, answered late, which made the next burst larger).
func TestDialsCapped(t *testing.T) {
	ca := testcert.NewCA(t, "test-ca")
	srv := ca.Server(t, "server", "localhost")
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var begun atomic.Int32
	ln := tls.NewListener(raw, &tls.Config{Certificates: []tls.Certificate{srv.TLS(t)},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			begun.Add(1)
			<-release
			return nil, nil
		}})
	hs := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})}
	go hs.Serve(ln)
	t.Cleanup(func() { close(release); hs.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	c, err := New("https://localhost:"+port, MaxConns(32), TLS(&tls.Config{RootCAs: ca.Pool()}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The requests give up after a while; until then every one of them
	// could have begun a handshake.
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if _, err := c.ServerLive(ctx); err == nil {
				t.Error("a request was answered by a server that completes no handshake")
			}
		})
	}
	wg.Wait()
	if n := begun.Load(); n != maxDialing {
		t.Errorf("%d handshakes begun by 32 waiting requests, want %d (maxDialing)", n, maxDialing)
	}
}

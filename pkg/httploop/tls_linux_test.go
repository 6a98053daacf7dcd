//go:build linux

package httploop

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/internal/testcert"
	"github.com/netloadgen/netloadgen/kserve"
)

// tlsPair is a server configuration for 127.0.0.1 and a client one that
// trusts it, made by the test's own CA.
func tlsPair(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	ca := testcert.NewCA(t, "httploop")
	server = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "server", "127.0.0.1").TLS(t)}}
	client = &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}
	return server, client
}

// startTLSServer is startServer over TLS, with the client configuration
// that trusts it.
func startTLSServer(t *testing.T, answer func(n int64) (string, bool)) (*testServer, *tls.Config) {
	t.Helper()
	srv, client := tlsPair(t)
	s := &testServer{answer: answer, tls: srv}
	s.start(t)
	return s, client
}

// Over TLS as in plain text: every request is answered, on no more
// connections than the cap, each answer timed by its arrival (the
// kernel's receive timestamp, read with the record that carried it).
func TestTLSLoopAnswersEveryRequestBeyondTheConnectionCap(t *testing.T) {
	s, client := startTLSServer(t, always(okResponse("")))
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 3, TLS: client}, &res)
	start := time.Now()
	const n = 50
	for i := range n {
		l.Send(testRequest, uint64(i))
	}
	pollFor(t, l, &res, n)
	for tag, err := range res.errs {
		if err != nil {
			t.Errorf("tag %d: %v", tag, err)
		}
		if at := res.at[tag]; at.Before(start) || at.After(time.Now()) {
			t.Errorf("tag %d answered at %v after the start: want a time within the test", tag, at.Sub(start))
		}
	}
	if c := s.conns.Load(); c > 3 || c == 0 {
		t.Errorf("%d connections opened, cap 3", c)
	}
	// A connection may still be in its handshake: it counts as
	// connecting until it is done.
	opening := 0
	for _, c := range l.slots {
		if c.state == stateConnecting || c.state == stateHandshaking {
			opening++
		}
	}
	if s.requests.Load() != n || l.Outstanding() != 0 || l.connecting != opening {
		t.Errorf("server read %d requests for %d; %d outstanding, %d connecting for %d opening after all answers",
			s.requests.Load(), n, l.Outstanding(), l.connecting, opening)
	}
}

// A server that reads a request and closes (with close_notify, as a TLS
// server does) fails that request as a closed connection, not sent again,
// and the next one goes on a new connection.
func TestTLSLoopFailsARequestTheServerReadAndDropped(t *testing.T) {
	s, client := startTLSServer(t, func(n int64) (string, bool) {
		if n == 1 {
			return drop()
		}
		return okResponse(""), false
	})
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1, TLS: client}, &res)
	for i := range 3 {
		l.Send(testRequest, uint64(i))
		pollFor(t, l, &res, i+1)
	}
	if res.errs[0] != nil || res.errs[2] != nil {
		t.Fatalf("requests 0 and 2: %v, %v", res.errs[0], res.errs[2])
	}
	if err := res.errs[1]; !errors.Is(err, kserve.ErrConnectionClosed) {
		t.Fatalf("request 1, read and dropped by the server: error %v, want kserve.ErrConnectionClosed", err)
	}
	if s.requests.Load() != 3 || l.Retries() != 0 {
		t.Errorf("server read %d requests, %d resends; want 3 and 0", s.requests.Load(), l.Retries())
	}
}

// An idle connection the server closes (close_notify, then the end of the
// stream) is found closed before a request is written on it.
func TestTLSLoopSkipsAConnectionFoundClosed(t *testing.T) {
	srv, client := tlsPair(t)
	s := &testServer{answer: always(okResponse("")), tls: srv, closeHold: make(chan struct{})}
	s.answer = func(int64) (string, bool) { return okResponse(""), true }
	s.start(t)
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1, TLS: client}, &res)
	for i := range 3 {
		l.Send(testRequest, uint64(i))
		pollFor(t, l, &res, i+1)
		if err := res.errs[uint64(i)]; err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		c := l.idle[0]
		s.closeHold <- struct{}{} // the server closes the idle connection
		for j, gen := 0, c.gen; c.gen == gen && c.state != stateClosed; j++ {
			if j == 1000 {
				t.Fatal("the loop never saw the server close its idle connection")
			}
			l.PollUntil(t.Context(), time.Now().Add(10*time.Millisecond))
		}
	}
	if s.requests.Load() != 3 || l.Retries() != 0 {
		t.Errorf("server read %d requests, %d resends; want 3 and 0", s.requests.Load(), l.Retries())
	}
}

// Connection: close over TLS, every answer: each request on a connection
// of its own, none failed.
func TestTLSLoopHonoursConnectionClose(t *testing.T) {
	s, client := startTLSServer(t, always(okResponse("Connection: close\r\n")))
	var res results
	l := newLoop(t, Config{Addr: s.addr(), MaxConns: 1, TLS: client}, &res)
	for i := range 3 {
		l.Send(testRequest, uint64(i))
	}
	pollFor(t, l, &res, 3)
	for tag, err := range res.errs {
		if err != nil {
			t.Errorf("tag %d: %v", tag, err)
		}
	}
	// (The loop may open one more, replacing the last closed connection.)
	if s.conns.Load() < 3 {
		t.Errorf("%d connections for 3 answers that each closed theirs", s.conns.Load())
	}
}

// A server that accepts and never answers the handshake holds nothing up
// for longer than the dial timeout: Preconnect fails, and a request waiting
// for a connection fails instead of waiting for ever.
func TestTLSHandshakeThatNeverEndsFailsInTime(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range held {
			c.Close()
		}
	})
	_, client := tlsPair(t)
	var res results
	l := newLoop(t, Config{Addr: ln.Addr().String(), MaxConns: 2, TLS: client, DialTimeout: 100 * time.Millisecond}, &res)
	if err := l.Preconnect(t.Context(), 2); !errors.Is(err, kserve.ErrTransport) || !strings.Contains(err.Error(), "TLS handshake") {
		t.Fatalf("preconnect to a server that never answers the handshake: %v, want a TLS handshake transport error", err)
	}
	l.Send(testRequest, 1)
	pollFor(t, l, &res, 1)
	if err := res.errs[1]; !errors.Is(err, kserve.ErrTransport) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "TLS handshake") {
		t.Fatalf("request error %v, want the handshake's timeout as a transport error", err)
	}
	if l.Conns() != 0 {
		t.Fatalf("%d connections left open after failed handshakes", l.Conns())
	}
}

// A server whose certificate the client does not trust: the handshake's
// own error, named.
func TestTLSHandshakeErrorIsReported(t *testing.T) {
	s, _ := startTLSServer(t, always(okResponse("")))
	_, other := tlsPair(t) // trusts another CA
	var res results
	l := newLoop(t, Config{Addr: s.addr(), TLS: other}, &res)
	err := l.Preconnect(t.Context(), 1)
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("preconnect with an untrusted server certificate: %v, want x509.UnknownAuthorityError", err)
	}
}

// Over TLS, the steady state allocates one object per answer: crypto/tls's
// reader of a record's first bytes (decrypt says why it cannot be
// spared); records are sealed and opened in the connection's buffers.
func TestTLSSteadyStateAllocatesOnePerAnswer(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	srv, client := tlsPair(t)
	assertAllocs(t, startTLSEcho(t, srv), client, 1)
}

// startTLSEcho is startEchoServer over TLS 1.3, allocating nothing per
// request either: it skips each request's record unread (its length is
// known) and encrypts the same answer.
func startTLSEcho(t *testing.T, srv *tls.Config) string {
	t.Helper()
	srv = srv.Clone()
	srv.MinVersion, srv.SessionTicketsDisabled = tls.VersionTLS13, true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	resp := []byte(okResponse(""))
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				tc := tls.Server(c, srv)
				if tc.Handshake() != nil {
					return
				}
				// The first request through TLS: it may have come with
				// the handshake's last bytes, which crypto/tls holds.
				first := make([]byte, len(testRequest))
				if _, err := io.ReadFull(tc, first); err != nil {
					return
				}
				// Then each a TLS 1.3 record: header, request, content
				// type, tag.
				buf := make([]byte, 5+len(testRequest)+1+16)
				for i := 0; ; i++ {
					if i > 0 {
						if _, err := io.ReadFull(c, buf); err != nil {
							return
						}
					}
					if _, err := tc.Write(resp); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// crypto/tls takes wouldBlock as temporary: a record that arrives a byte
// at a time is decrypted when its last byte comes, each Read before that
// returning wouldBlock and none of them breaking the connection (see
// wouldBlock for the lines of crypto/tls this relies on).
func TestTLSReadResumesAfterWouldBlock(t *testing.T) {
	srvCfg, client := tlsPair(t)
	srvCfg.SessionTicketsDisabled = true // nothing after the handshake but the record
	cc, sc := net.Pipe()
	defer cc.Close()
	defer sc.Close()
	srv := tls.Server(sc, srvCfg)
	sock := &tlsSock{nc: cc}
	tc := tls.Client(sock, client)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Handshake() })
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	const msg = "hello, loop"
	wg.Go(func() { _, _ = srv.Write([]byte(msg)) })
	// TLS 1.3: a 5-byte header, the message, its content type, a 16-byte tag.
	record := make([]byte, 5+len(msg)+1+16)
	if _, err := io.ReadFull(cc, record); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	sock.nc = nil // the loop's mode
	buf := make([]byte, 64)
	for i := range record {
		sock.in = record[i : i+1]
		n, err := tc.Read(buf)
		if i < len(record)-1 {
			if n != 0 || !errors.Is(err, errWouldBlock) {
				t.Fatalf("byte %d of %d: %d bytes, error %v; want wouldBlock", i+1, len(record), n, err)
			}
			continue
		}
		if err != nil || string(buf[:n]) != msg {
			t.Fatalf("last byte: %q, %v; want %q", buf[:n], err, msg)
		}
	}
}

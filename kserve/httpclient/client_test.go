package httpclient

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

func TestNewHTTPClientRejectsBadURLs(t *testing.T) {
	tests := []struct{ url, wantInMsg string }{
		{"localhost:8000", "scheme"},
		{"ftp://host:8000", "scheme"},
		{"http://", "no host"},
		{"http://:8000", "no host"},
		{"http://host:notaport", "host:notaport"},
		{"http://host:70000", "port"},
		{"http://host:8000/?q=1", "query"},
		{"http://user@host:8000", "user"},
		{"://x", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			c, err := New(tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Errorf("New(%q) = %v, %v; want an error naming %q", tt.url, c, err, tt.wantInMsg)
			}
		})
	}
	if _, err := New("http://127.0.0.1:8000", MaxConns(0)); err == nil {
		t.Error("max connections 0 accepted")
	}
	for _, ok := range []string{"http://127.0.0.1:8000", "http://example.com", "http://[::1]:9/prefix/"} {
		if _, err := New(ok); err != nil {
			t.Errorf("New(%q): %v", ok, err)
		}
	}
}

// scriptedServer serves HTTP/1.1 on 127.0.0.1: request n (counting from 0
// across connections) is answered with a keep-alive 200 when answer(n),
// else read and dropped (the connection closed without a word); after
// closeAfter requests on a connection it closes that connection. Each
// close is signalled on closed, after it.
type scriptedServer struct {
	url      string
	answer   func(n int) bool
	perConn  int // requests a connection serves before its close; 0: no limit
	closed   chan struct{}
	mu       sync.Mutex
	accepted int
	requests int
}

func startScripted(t *testing.T, perConn int, answer func(n int) bool) *scriptedServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startScriptedOn(t, ln, "http://"+ln.Addr().String(), perConn, answer)
}

// startScriptedOn is startScripted on ln (a TLS listener), at url.
func startScriptedOn(t *testing.T, ln net.Listener, url string, perConn int, answer func(n int) bool) *scriptedServer {
	s := &scriptedServer{url: url, answer: answer, perConn: perConn, closed: make(chan struct{}, 16)}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.accepted++
			s.mu.Unlock()
			wg.Go(func() { s.serve(conn) })
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return s
}

func (s *scriptedServer) serve(conn net.Conn) {
	defer func() {
		conn.Close()
		s.closed <- struct{}{}
	}()
	br := bufio.NewReader(conn)
	for i := 0; s.perConn == 0 || i < s.perConn; i++ {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		req.Body.Close()
		s.mu.Lock()
		n := s.requests
		s.requests++
		s.mu.Unlock()
		if !s.answer(n) {
			return
		}
		if _, err := conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")); err != nil {
			return
		}
	}
}

func (s *scriptedServer) counts() (accepted, requests int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted, s.requests
}

func always(int) bool { return true }

// warmClient is a one-connection client of s whose first request has been
// answered: its connection is pooled, reused by the next request.
func warmClient(t *testing.T, s *scriptedServer) *Client {
	t.Helper()
	c, err := New(s.url, MaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if live, err := c.ServerLive(t.Context()); !live || err != nil {
		t.Fatalf("first request: %v, %v", live, err)
	}
	if c.Retries() != 0 {
		t.Fatalf("retries %d after a first request", c.Retries())
	}
	return c
}

// A pooled connection the server closed while idle is found closed before
// the request is written: the request goes on a fresh connection, counted
// as a resend, and reaches the server once.
func TestHTTPClientResendsWhenItFindsThePooledConnectionClosed(t *testing.T) {
	s := startScripted(t, 1, always)
	c := warmClient(t, s)
	<-s.closed // the pooled connection is closed by the server
	if live, err := c.ServerLive(t.Context()); !live || err != nil {
		t.Fatalf("second request: %v, %v", live, err)
	}
	if accepted, requests := s.counts(); c.Retries() != 1 || accepted != 2 || requests != 2 {
		t.Errorf("retries %d, connections %d, requests %d; want 1, 2, 2", c.Retries(), accepted, requests)
	}
}

// A request the server read on a reused connection and then dropped the
// connection on was written: it may have run. It fails as
// kserve.ErrConnectionClosed, and is not sent again.
func TestHTTPClientFailsARequestTheServerReadAndDropped(t *testing.T) {
	s := startScripted(t, 0, func(n int) bool { return n != 1 })
	c := warmClient(t, s)
	_, err := c.ServerLive(t.Context())
	if !errors.Is(err, kserve.ErrConnectionClosed) || !errors.Is(err, kserve.ErrTransport) {
		t.Errorf("request read and dropped by the server: %v, want kserve.ErrConnectionClosed", err)
	}
	if _, requests := s.counts(); requests != 2 || c.Retries() != 0 {
		t.Errorf("server read %d requests for 2 sent, %d resends; want 2 and 0", requests, c.Retries())
	}
	if live, err := c.ServerLive(t.Context()); !live || err != nil {
		t.Errorf("the next request, on a new connection: %v, %v", live, err)
	}
}

func TestHTTPClientDoesNotRetryFreshConnectionFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close() // closes every new connection unanswered
		}
	}()
	defer func() { ln.Close(); <-done }()
	c, err := New("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ServerLive(context.Background())
	if !errors.Is(err, kserve.ErrTransport) || c.Retries() != 0 {
		t.Errorf("err %v, retries %d; want kserve.ErrTransport and no retry", err, c.Retries())
	}
}

func TestHTTPClientTransportErrorOnRefusedConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ServerMetadata(context.Background()); !errors.Is(err, kserve.ErrTransport) {
		t.Errorf("err %v, want kserve.ErrTransport", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.ServerLive(ctx); !errors.Is(err, kserve.ErrTransport) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v, want kserve.ErrTransport and context.Canceled", err)
	}
}

// kserveStyleServer behaves like the KServe Python server: JSON health
// bodies with 503 when not ready, JSON errors, and a binary infer response
// sent chunked with no Content-Length.
func kserveStyleServer(t *testing.T, ready bool, infer []byte, jsonLen int) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/health/live", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"live":true}`))
	})
	mux.HandleFunc("GET /v2/health/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"ready":false}`))
			return
		}
		w.Write([]byte(`{"ready":true}`))
	})
	mux.HandleFunc("GET /v2/models/{m}/ready", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"Model with name ` + r.PathValue("m") + ` does not exist."}`))
	})
	mux.HandleFunc("GET /v2/models/{m}", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte("Internal Server Error\n"))
	})
	mux.HandleFunc("POST /v2/models/{m}/infer", func(w http.ResponseWriter, r *http.Request) {
		switch ct := r.Header.Get("Content-Type"); {
		case ct == "application/json":
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"error":"this test server takes binary requests only"}`))
			return
		case ct != "application/octet-stream" || r.Header.Get(kserve.HeaderInferenceContentLength) == "":
			// As the KServe Python server's FastAPI front: a body without
			// Content-Type is parsed as JSON, so a binary one fails there.
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"detail":"There was an error parsing the body"}`))
			return
		}
		w.Header().Set(kserve.HeaderInferenceContentLength, strconv.Itoa(jsonLen))
		w.Write(infer[:len(infer)/2])
		w.(http.Flusher).Flush() // headers go out now: chunked, no Content-Length
		w.Write(infer[len(infer)/2:])
	})
	srv := &http.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func TestHTTPClientAgainstKServeStyleServer(t *testing.T) {
	want := &kserve.InferResponse{Model: "m", ID: "7", Outputs: []kserve.Tensor{
		{Name: "o", Datatype: kserve.FP32, Shape: []int64{1, 2}, Data: []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}},
		{Name: "s", Datatype: kserve.Bytes, Shape: []int64{1}, Data: kserve.AppendBytesElement(nil, []byte("chunk"))},
	}}
	body, jsonLen, err := kserve.EncodeInferResponse(nil, want, []bool{true, true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ready := range []bool{true, false} {
		c, err := New(kserveStyleServer(t, ready, body, jsonLen))
		if err != nil {
			t.Fatal(err)
		}
		if live, err := c.ServerLive(ctx); !live || err != nil {
			t.Errorf("ServerLive = %v, %v", live, err)
		}
		if got, err := c.ServerReady(ctx); got != ready || err != nil {
			t.Errorf("ServerReady = %v, %v; want %v", got, err, ready)
		}
		if !ready {
			continue
		}
		_, err = c.ModelReady(ctx, "nope", "")
		var ke *kserve.Error
		if !errors.Is(err, kserve.ErrNotFound) || !errors.As(err, &ke) || ke.Message != "Model with name nope does not exist." {
			t.Errorf("ModelReady(unknown) = %v", err)
		}
		_, err = c.ModelMetadata(ctx, "m", "")
		if !errors.Is(err, kserve.ErrInternal) || !errors.As(err, &ke) || ke.Message != "Internal Server Error" || ke.HTTPStatus != 500 {
			t.Errorf("ModelMetadata with a plain-text 500 = %v", err)
		}
		req := &kserve.InferRequest{Model: "m", Inputs: []kserve.Tensor{{Name: "i", Datatype: kserve.Int64, Shape: []int64{1}, Data: make([]byte, 8)}}}
		got, err := c.Infer(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Infer over a chunked response:\n got %+v\nwant %+v", got, want)
		}
		p, err := c.PrepareInfer(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.InferPreparedCheck(ctx, p); err != nil {
			t.Errorf("InferPreparedCheck: %v", err)
		}
		start := time.Now()
		at, err := c.InferPreparedCheckAt(ctx, p)
		end := time.Now()
		if err != nil || at.IsZero() || at.Before(start) || at.After(end) {
			t.Errorf("InferPreparedCheckAt = %v (%v after the call began, which took %v), %v; want the arrival within the call",
				at, at.Sub(start), end.Sub(start), err)
		}
		// Pure JSON requests carry Content-Type: the server here refuses them with 422.
		jc, err := New("http://"+c.host, Binary(false))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jc.Infer(ctx, req); !errors.Is(err, kserve.ErrInvalidArgument) || !errors.As(err, &ke) || ke.HTTPStatus != 422 {
			t.Errorf("JSON request to a binary-only server: %v, want 422 invalid argument", err)
		}
	}
}

// TestRepositoryIndex: POST /v2/repository/index with an empty JSON
// object, its array decoded; an error status is an error.
func TestRepositoryIndex(t *testing.T) {
	var mu sync.Mutex // the handler's goroutine and the test's
	var gotMethod, gotBody string
	status := http.StatusOK
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		b := make([]byte, 16)
		n, _ := r.Body.Read(b)
		gotMethod, gotBody = r.Method+" "+r.URL.Path, string(b[:n])
		if status != http.StatusOK {
			w.WriteHeader(status)
			w.Write([]byte(`{"error":"not served"}`))
			return
		}
		w.Write([]byte(`[{"name":"identity","version":"1","state":"READY"},{"name":"resnet50"}]`))
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	c, err := New("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	models, err := c.RepositoryIndex(t.Context())
	if err != nil || len(models) != 2 || models[0].Name != "identity" || models[0].State != "READY" || models[1].Name != "resnet50" {
		t.Fatalf("%+v, %v", models, err)
	}
	mu.Lock()
	if gotMethod != "POST /v2/repository/index" || gotBody != "{}" {
		t.Errorf("sent %q with body %q", gotMethod, gotBody)
	}
	status = http.StatusNotFound
	mu.Unlock()
	if _, err := c.RepositoryIndex(t.Context()); !errors.Is(err, kserve.ErrNotFound) {
		t.Errorf("404: %v", err)
	}
}

package genclient

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/outcome"
	"github.com/netloadgen/netloadgen/pkg/rxstamp"
)

// rawServer answers each request on a connection with answer's bytes as
// they are, then closes the connection when close is set.
func rawServer(t *testing.T, answer string, close bool) string {
	return rawServerClosing(t, answer, close, nil)
}

// rawServerClosing is rawServer telling closed (when not nil) of each
// connection it has closed.
func rawServerClosing(t *testing.T, answer string, close bool, closed chan<- struct{}) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() {
					conn.Close()
					if closed != nil {
						closed <- struct{}{}
					}
				}()
				br := bufio.NewReader(conn)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if _, err := io.WriteString(conn, answer); err != nil || close {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

const sseHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

// chunk frames s as one HTTP chunk.
func chunk(s string) string { return strings.ToUpper(strconvHex(len(s))) + "\r\n" + s + "\r\n" }

func strconvHex(n int) string {
	const digits = "0123456789abcdef"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n >>= 4 {
		b = append([]byte{digits[n&15]}, b...)
	}
	return string(b)
}

const tok = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"

// TestMalformedStreamsFailTheSample: every malformed stream ends its
// request with an error matching genai.ErrStream and kserve.ErrMalformed
// (outcome "malformed"), after the tokens that came before it; a stream cut
// by the server's close is "connection_closed". None hangs.
func TestMalformedStreamsFailTheSample(t *testing.T) {
	cases := []struct {
		name, answer string
		api          genai.API
		outcome      string
		say          string
	}{
		{"bad SSE line", sseHead + chunk(tok+"garbage\n\n") + "0\r\n\r\n", genai.APIOpenAIChat, "malformed", "bad SSE line"},
		{"error event", sseHead + chunk(tok+"event: error\ndata: {\"message\":\"engine died\"}\n\n") + "0\r\n\r\n", genai.APIOpenAIChat, "malformed", "engine died"},
		{"error object mid-stream", sseHead + chunk(tok+"data: {\"error\":{\"message\":\"oom\"}}\n\n") + "0\r\n\r\n", genai.APIOpenAIChat, "malformed", "oom"},
		{"triton error mid-stream", sseHead + chunk("data: {\"text_output\":\"a\"}\n\ndata: {\"error\":\"boom\"}\n\n") + "0\r\n\r\n", genai.APIGenerateStream, "malformed", "boom"},
		{"no [DONE]", sseHead + chunk(tok) + "0\r\n\r\n", genai.APIOpenAICompletions, "malformed", "without data: [DONE]"},
		{"not JSON", sseHead + chunk(tok+"data: {\"choices\":[{\"delta\n\n") + "0\r\n\r\n", genai.APIOpenAIChat, "malformed", "not a JSON object"},
		{"ends inside an event", sseHead + chunk(tok+"data: {}\n") + "0\r\n\r\n", genai.APIGenerateStream, "malformed", "inside an SSE event"},
		{"bad chunk size", sseHead + chunk(tok) + "zz\r\n", genai.APIOpenAIChat, "malformed", "chunk size"},
		{"chunk longer than its size", sseHead + "3\r\n" + tok + "\r\n", genai.APIOpenAIChat, "malformed", "longer than its size"},
		{"non-streamed answer not JSON", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\nhello", genai.APIGenerate, "malformed", "not a JSON object"},
		{"closed mid-stream", sseHead + chunk(tok), genai.APIOpenAIChat, "connection_closed", ""},
		{"closed before the head", "", genai.APIOpenAIChat, "connection_closed", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, rawServer(t, tc.answer, true), tc.api, Options{})
			r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true})
			if o, _ := outcome.Classify(r.err); o.String() != tc.outcome {
				t.Fatalf("End error %v: outcome %s, want %s", r.err, o, tc.outcome)
			}
			if tc.outcome == "malformed" && (!errors.Is(r.err, genai.ErrStream) || !strings.Contains(r.err.Error(), tc.say)) {
				t.Errorf("End error %v: want genai.ErrStream saying %q", r.err, tc.say)
			}
			if tc.answer != "" && !strings.Contains(tc.name, "chunk") && !strings.Contains(tc.name, "JSON") && r.tokens() != 1 {
				t.Errorf("%d tokens before the failure, want the 1 sent", r.tokens())
			}
		})
	}
}

// stallHandler sends one token, then holds the stream open until release
// is closed (or the client goes).
func stallHandler(release <-chan struct{}, active *atomic.Int32, peak *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := active.Add(1)
		defer active.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, tok)
		w.(http.Flusher).Flush()
		select {
		case <-release:
			io.WriteString(w, "data: [DONE]\n\n")
		case <-r.Context().Done():
		}
	})
}

// TestStalledStreamEndsOnCancel: a server that stops sending mid-stream
// does not hang the request: cancelling its context ends it (outcome
// "other", the context's error), and the client's request timeout ends it
// as a timeout.
func TestStalledStreamEndsOnCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var active, peak atomic.Int32
	base := serve(t, stallHandler(release, &active, &peak))

	c := newClient(t, base, genai.APIOpenAIChat, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	r := newRec()
	r.onTok = make(chan struct{}, 1)
	c.Generate(ctx, &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true}, r)
	<-r.onTok // the first token came; the server now stalls
	cancel()
	r.wait(t)
	if !errors.Is(r.err, context.Canceled) || !errors.Is(r.err, kserve.ErrTransport) {
		t.Errorf("End error %v, want kserve.ErrTransport and context.Canceled", r.err)
	}

	ct := newClient(t, base, genai.APIOpenAIChat, Options{}, httpclient.RequestTimeout(50*time.Millisecond))
	r = generate(t, ct, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true})
	if o, _ := outcome.Classify(r.err); o != outcome.Timeout || r.tokens() != 1 {
		t.Errorf("End error %v after %d tokens: outcome %s, want timeout after 1", r.err, r.tokens(), o)
	}

	cs := newClient(t, base, genai.APIOpenAIChat, Options{StallTimeout: 50 * time.Millisecond})
	r = generate(t, cs, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true})
	if o, _ := outcome.Classify(r.err); o != outcome.Timeout || r.tokens() != 1 || !strings.Contains(r.err.Error(), "stall timeout") {
		t.Errorf("End error %v after %d tokens: outcome %s, want a stall timeout after 1", r.err, r.tokens(), o)
	}
}

// TestStallTimeoutSparesAFlowingStream: with a stall bound set, streams
// that keep coming complete, request after request on the pooled calls.
func TestStallTimeoutSparesAFlowingStream(t *testing.T) {
	c := newClient(t, serve(t, &fakeLLM{tokens: 20}), genai.APIGenerateStream, Options{StallTimeout: 5 * time.Second})
	for i := range 3 {
		r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 20), ID: uint64(i)})
		if r.err != nil || r.tokens() != 20 {
			t.Fatalf("request %d: End %v after %d tokens", i, r.err, r.tokens())
		}
	}
	if _, err := New("http://h", genai.APIOpenAIChat, Options{StallTimeout: -1}); err == nil || !strings.Contains(err.Error(), "stall timeout") {
		t.Errorf("a negative stall timeout: %v", err)
	}
}

// TestMaxConnsBoundsStreams: with MaxConns(2), no more than 2 streams are
// open at the server at once; the others wait for a connection and then
// complete. Each stream is let go only after the next has reached the
// server (or, for the last ones, after all have), so without the bound
// more than 2 would be open.
func TestMaxConnsBoundsStreams(t *testing.T) {
	const n, bound = 5, 2
	release := make(chan struct{})
	entered := make(chan struct{}, n)
	var active, peak atomic.Int32
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := active.Add(1)
		defer active.Add(-1)
		for p := peak.Load(); a > p && !peak.CompareAndSwap(p, a); p = peak.Load() {
		}
		entered <- struct{}{}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, tok)
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	c := newClient(t, base, genai.APIOpenAIChat, Options{}, httpclient.MaxConns(bound))
	if c.HTTP().MaxConnections() != bound {
		t.Fatalf("MaxConnections %d, want %d", c.HTTP().MaxConnections(), bound)
	}
	recs := make([]*rec, n)
	for i := range recs {
		recs[i] = newRec()
		c.Generate(context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 3), Stream: true, ID: uint64(i)}, recs[i])
	}
	for i := range n {
		<-entered
		if i >= bound-1 {
			release <- struct{}{} // one stream ends, one waiting request may go
		}
	}
	for range bound - 1 {
		release <- struct{}{}
	}
	for _, r := range recs {
		r.wait(t)
		if r.err != nil || r.tokens() != 1 {
			t.Errorf("End error %v after %d tokens", r.err, r.tokens())
		}
	}
	if p := peak.Load(); p != bound {
		t.Errorf("%d streams open at once at the server, want %d", p, bound)
	}
}

// TestConnectionReusedAfterTheStream: an answer read to its end (past
// OpenAI's [DONE], to the chunked body's end) leaves its connection for the
// next request.
func TestConnectionReusedAfterTheStream(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(&fakeLLM{tokens: 4})
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	for _, api := range []genai.API{genai.APIOpenAIChat, genai.APIGenerateStream, genai.APIGenerate} {
		conns.Store(0)
		c := newClient(t, srv.URL, api, Options{})
		for i := range 3 {
			r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 4), Stream: true, ID: uint64(i)})
			if r.err != nil {
				t.Fatalf("%s: End error %v", api, r.err)
			}
		}
		if n := conns.Load(); n != 1 {
			t.Errorf("%s: 3 requests in turn opened %d connections, want 1", api, n)
		}
	}
}

// TestHeadersAndTLS: over https, the client checks the server's
// certificate against the roots given, and sends the added headers (a
// Host that routes, an Authorization).
func TestHeadersAndTLS(t *testing.T) {
	f := &fakeLLM{tokens: 2}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	hs := []kserve.Header{{Name: "Host", Value: "llm.example"}, {Name: "Authorization", Value: "Bearer k"}}
	c := newClient(t, srv.URL, genai.APIOpenAIChat, Options{}, httpclient.TLS(&tls.Config{RootCAs: roots}), httpclient.Headers(hs))
	r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 2), Stream: true})
	if r.err != nil || r.tokens() != 2 {
		t.Fatalf("End %v after %d tokens", r.err, r.tokens())
	}
	if f.seen().hosts[0] != "llm.example" || f.seen().hdrs[0].Get("Authorization") != "Bearer k" {
		t.Errorf("host %q, Authorization %q", f.seen().hosts[0], f.seen().hdrs[0].Get("Authorization"))
	}
	untrusted := newClient(t, srv.URL, genai.APIOpenAIChat, Options{})
	r = generate(t, untrusted, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 2), Stream: true})
	if o, _ := outcome.Classify(r.err); o != outcome.Transport || !strings.Contains(r.err.Error(), "certificate") {
		t.Errorf("an untrusted certificate: %v (outcome %s), want a transport error naming it", r.err, o)
	}
}

// TestResponsesTimedWhenTheyArrive: each response's time is within its
// write at the server and its delivery to the handler: the server writes a
// token only when the handler has had the one before, so the bounds are
// each token's own.
func TestResponsesTimedWhenTheyArrive(t *testing.T) {
	const n = 5
	step := make(chan struct{})
	var mu sync.Mutex
	var wrote []time.Time
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range n {
			mu.Lock()
			wrote = append(wrote, time.Now())
			mu.Unlock()
			io.WriteString(w, tok)
			w.(http.Flusher).Flush()
			<-step
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	c := newClient(t, base, genai.APIOpenAIChat, Options{})
	r := newRec()
	r.onTok = make(chan struct{})
	c.Generate(context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", n), Stream: true}, r)
	for range n {
		<-r.onTok
		step <- struct{}{}
	}
	r.wait(t)
	const slack = 200 * time.Microsecond // wall and monotonic readings differ by conversion noise
	for i := range n {
		if r.ats[i].Before(wrote[i].Add(-slack)) || r.ats[i].After(r.calls[i]) {
			t.Errorf("response %d timed %v after its write and %v before the handler heard it",
				i, r.ats[i].Sub(wrote[i]), r.calls[i].Sub(r.ats[i]))
		}
	}
}

// TestOneJSONAnswerToAStreamedRequest: a server that ignores stream: true
// and answers one JSON object is read as that answer, and a server that
// says it closes the connection gets a fresh one for the next request.
func TestOneJSONAnswerToAStreamedRequest(t *testing.T) {
	const body = `{"choices":[{"message":{"content":"a b"}}],"usage":{"prompt_tokens":2,"completion_tokens":2}}`
	answer := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + strconvItoa(len(body)) + "\r\n\r\n" + body
	c := newClient(t, rawServer(t, answer, true), genai.APIOpenAIChat, Options{})
	for range 2 {
		r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 2), Stream: true})
		if r.err != nil || len(r.ns) != 1 || r.usage.OutputTokens != 2 {
			t.Fatalf("End %v after %d responses, usage %+v; want one response, 2 tokens by usage", r.err, len(r.ns), r.usage)
		}
	}
	if c.Retries() != 0 {
		t.Errorf("%d requests sent again: the closed connection was reused", c.Retries())
	}
}

func strconvItoa(n int) string { return strconv.Itoa(n) }

// TestResponseTimedByArrivalNotByRead: a response that waits in the
// kernel while the client is busy (here: its handler still holding the
// response before) is timed by its arrival, before the client could read
// it, not by the read.
func TestResponseTimedByArrivalNotByRead(t *testing.T) {
	if !kernelStamps(t) {
		t.Skip("no kernel receive timestamps here")
	}
	write1 := make(chan struct{})
	written := make(chan time.Time, 1)
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, tok)
		w.(http.Flusher).Flush()
		<-write1
		io.WriteString(w, tok)
		w.(http.Flusher).Flush()
		written <- time.Now()
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	c := newClient(t, base, genai.APIOpenAIChat, Options{})
	got0, go0 := make(chan struct{}), make(chan struct{})
	r := newRec()
	r.hook = func(i int) {
		if i == 0 {
			close(got0)
			<-go0 // the client is busy: response 1 waits in the kernel
		}
	}
	c.Generate(context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 2), Stream: true}, r)
	<-got0
	close(write1)
	wroteAt := <-written
	// Let the arrival and the release lie far enough apart that the
	// conversion of the kernel's stamp to a time.Time (microseconds of
	// error) cannot order them the wrong way: what is tested is that the
	// response is timed at its arrival, milliseconds before its read.
	time.Sleep(5 * time.Millisecond)
	released := time.Now()
	close(go0)
	r.wait(t)
	if r.err != nil || len(r.ats) != 2 {
		t.Fatalf("End %v after %d responses", r.err, len(r.ats))
	}
	if at := r.ats[1]; !at.Before(released) {
		t.Errorf("response 1 timed %v after the client was let read it (written %v before that): the read's time, not the arrival",
			at.Sub(released), released.Sub(wroteAt))
	}
}

// kernelStamps says whether this host's loopback sockets carry receive
// timestamps.
func kernelStamps(t *testing.T) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	return rxstamp.Wrap(nc.(*net.TCPConn)).Stamped()
}

// TestEventsLabelledAsText: events to a streamed request are read as
// events whatever their content type says, unless it says JSON.
func TestEventsLabelledAsText(t *testing.T) {
	answer := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(tok+tok+"data: [DONE]\n\n") + "0\r\n\r\n"
	c := newClient(t, rawServer(t, answer, false), genai.APIOpenAIChat, Options{})
	r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 2), Stream: true})
	if r.err != nil || r.tokens() != 2 {
		t.Fatalf("End %v after %d tokens, want 2", r.err, r.tokens())
	}
}

// TestStaleConnectionSentAgainBeforeWriting: a kept-alive connection the
// server closed while idle is found so before the request is written, and
// the request goes on a fresh one (counted), as tensor requests do.
func TestStaleConnectionSentAgainBeforeWriting(t *testing.T) {
	answer := sseHead + chunk(tok+"data: [DONE]\n\n") + "0\r\n\r\n"
	closed := make(chan struct{}, 2)
	c := newClient(t, rawServerClosing(t, answer, true, closed), genai.APIOpenAIChat, Options{})
	for i := range 2 {
		r := generate(t, c, context.Background(), &genai.Request{Model: "m", Prompt: prompt("x", 1), Stream: true, ID: uint64(i)})
		if r.err != nil || r.tokens() != 1 {
			t.Fatalf("request %d: End %v after %d tokens", i, r.err, r.tokens())
		}
		<-closed // the server has closed the connection, idle in the pool
	}
	if c.Retries() != 1 {
		t.Errorf("%d requests sent again, want 1 (the second, its connection closed while idle)", c.Retries())
	}
}

package runner

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/internal/testcert"
	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/target"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// rawHTTP is a hostile HTTP/1.1 server on loopback: every request it
// reads (head, and a Content-Length body) is answered with the exact bytes
// answer returns; it counts the requests and keeps their heads.
type rawHTTP struct {
	ln       net.Listener
	requests atomic.Int64
	mu       sync.Mutex
	heads    []string
}

func startRaw(t *testing.T, answer func(head string) string) *rawHTTP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawHTTP{ln: ln}
	var wg sync.WaitGroup
	var conns sync.Map // net.Conn: closed at cleanup, as clients may keep theirs idle
	t.Cleanup(func() {
		ln.Close()
		conns.Range(func(c, _ any) bool { c.(net.Conn).Close(); return true })
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Store(c, nil)
			wg.Go(func() { s.serve(c, answer) })
		}
	})
	return s
}

func (s *rawHTTP) serve(c net.Conn, answer func(head string) string) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	r := textproto.NewReader(bufio.NewReader(c))
	for {
		var head strings.Builder
		n := 0
		for {
			line, err := r.ReadLine()
			if err != nil {
				return
			}
			if line == "" {
				break
			}
			head.WriteString(line + "\n")
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if _, err := io.CopyN(io.Discard, r.R, int64(n)); err != nil {
			return
		}
		s.requests.Add(1)
		s.mu.Lock()
		s.heads = append(s.heads, head.String())
		s.mu.Unlock()
		if _, err := io.WriteString(c, answer(head.String())); err != nil {
			return
		}
	}
}

func (s *rawHTTP) addr() string { return s.ln.Addr().String() }

// witnessModels is what the redirect's target would say: an error that
// quotes it has read its answer.
const witnessModels = "model-only-the-witness-knows"

// redirectTo answers every request with status and Location loc.
func redirectTo(status int, loc string) func(string) string {
	return func(string) string {
		return "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\nLocation: " + loc + "\r\nContent-Length: 0\r\n\r\n"
	}
}

// TestProbeDoesNotFollowRedirects: a target that answers the probe with a
// 3xx gets the redirect reported ("the target redirects to URL: point
// --target there", URL the Location resolved against the request's), and
// nothing is sent to the Location: not the OpenAI probe's GET /v1/models
// with the run's Authorization, not the KServe probe's health request, not
// the auto-detection's fallback to /v1/models. The witness, listening at
// the Location, answers with a model list naming the run's model, so a
// client that followed would also have passed the probe.
func TestProbeDoesNotFollowRedirects(t *testing.T) {
	witness := startRaw(t, func(string) string {
		body := `{"object":"list","data":[{"id":"llm"},{"id":"` + witnessModels + `"}]}`
		return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	})
	w := "http://" + witness.addr()
	auth := []Header{{Name: "Authorization", Value: "Bearer sk-run-secret"}}
	cases := []struct {
		name   string
		status int
		loc    string
		api    genai.API
		want   string // the URL reported, "T" standing for the target's address
	}{
		{"openai/302-other-host", http.StatusFound, w + "/v1/models", genai.APIOpenAIChat, w + "/v1/models"},
		{"openai/307-same-host-other-port", http.StatusTemporaryRedirect, w + "/v1/models", genai.APIOpenAICompletions, w + "/v1/models"},
		{"openai/301-relative", http.StatusMovedPermanently, "/elsewhere/v1/models", genai.APIOpenAIChat, "http://T/elsewhere/v1/models"},
		{"auto/302-kserve-health", http.StatusFound, w + "/v2/health/live", "", w + "/v2/health/live"},
		{"auto/308-relative", http.StatusPermanentRedirect, "live", "", "http://T/v2/health/live"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := witness.requests.Load()
			srv := startRaw(t, redirectTo(c.status, c.loc))
			tg, err := target.Parse("http://" + srv.addr())
			if err != nil {
				t.Fatal(err)
			}
			conn, err := connect(t.Context(), tg, 1, true, sent(auth), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.probe.Close()
			pr, err := probeRun(t.Context(), conn.probe, tg, Spec{Model: "llm", API: c.api, Headers: auth}, nil)
			if got := witness.requests.Load() - before; got != 0 {
				t.Errorf("the redirect's target got %d requests, want none", got)
			}
			if err == nil {
				t.Fatalf("probe passed (%+v): want the redirect reported", pr)
			}
			want := "the target redirects to " + strings.ReplaceAll(c.want, "T", srv.addr()) + ": point --target there"
			if !strings.Contains(err.Error(), want) || !errors.Is(err, ErrRedirect) || !errors.Is(err, target.ErrTarget) {
				t.Errorf("error %q: want ErrRedirect, containing %q", err, want)
			}
			if strings.Contains(err.Error(), witnessModels) || strings.Contains(err.Error(), "sk-run-secret") {
				t.Errorf("error %q quotes the witness or the credentials", err)
			}
		})
	}
}

// TestProbeHTTPToTLSPort: http:// to a port that speaks TLS says "the port
// speaks TLS: use https://..." whether the TLS server answers the plain
// request with Go's "400 Client sent an HTTP request to an HTTPS server"
// (which the health check would read as "not live") or with TLS alert
// bytes.
func TestProbeHTTPToTLSPort(t *testing.T) {
	goTLS := startGoTLS(t)
	alert := startAlertTLS(t)
	for _, c := range []struct{ name, addr string }{{"go-tls-server-400", goTLS}, {"raw-tls-alert", alert}} {
		t.Run(c.name, func(t *testing.T) {
			tg, err := target.Parse("http://" + c.addr)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := connect(t.Context(), tg, 1, true, nil, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.probe.Close()
			_, err = probeRun(t.Context(), conn.probe, tg, Spec{Model: "m"}, nil)
			want := "the port speaks TLS: use https://" + c.addr
			if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrTLS) {
				t.Errorf("error %v: want ErrTLS, containing %q", err, want)
			}
		})
	}
}

// startGoTLS is Go's own HTTPS server: to plain HTTP it answers
// "HTTP/1.0 400 Bad Request ... Client sent an HTTP request to an HTTPS
// server".
func startGoTLS(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.NotFoundHandler(), TLSConfig: serverTLS(t), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// startAlertTLS is a raw TLS port: a connection that opens with a TLS
// handshake record shakes hands; one that opens with anything else gets a
// TLS alert record (fatal, protocol_version) and is closed.
func startAlertTLS(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := serverTLS(t)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				first, err := br.Peek(1)
				if err != nil {
					return
				}
				if first[0] != 0x16 {
					_, _ = c.Write([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46})
					return
				}
				tc := tls.Server(&peeked{Conn: c, r: br}, cfg)
				if tc.Handshake() == nil {
					_, _ = io.Copy(io.Discard, tc)
				}
			})
		}
	})
	return ln.Addr().String()
}

// peeked is a connection whose first bytes were read into r.
type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (p *peeked) Read(b []byte) (int, error) { return p.r.Read(b) }

func serverTLS(t *testing.T) *tls.Config {
	ca := testcert.NewCA(t, "test-ca")
	return &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "server", "127.0.0.1", "localhost").TLS(t)}}
}

// TestProbeHTTPSToSilentPlainPort: https:// to a plain port that accepts
// and never writes says "no TLS handshake from the server in N s: is it
// plain HTTP?" when the handshake's time is up, not "context deadline
// exceeded".
func TestProbeHTTPSToSilentPlainPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer c.Close(); _, _ = io.Copy(io.Discard, c) })
		}
	})
	defer func(d time.Duration) { handshakeTimeout = d }(handshakeTimeout)
	handshakeTimeout = 200 * time.Millisecond
	tg, err := target.Parse("https://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := tlsConfig(tg, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := connect(t.Context(), tg, 1, true, nil, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.probe.Close()
	_, err = probeRun(t.Context(), conn.probe, tg, Spec{Model: "m"}, cfg)
	const want = "no TLS handshake from the server in 0.2 s: is it plain HTTP?"
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrTLS) {
		t.Errorf("error %v: want ErrTLS, containing %q", err, want)
	}
}

// rawKServe answers the KServe probe of model "m" (one FP32 [1,4] input
// and output) with fixed bytes, and every inference request with infer.
func rawKServe(infer func(head string) string) func(string) string {
	ok := func(body string) string {
		return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	return func(head string) string {
		line, _, _ := strings.Cut(head, "\n")
		switch {
		case strings.HasPrefix(line, "GET /v2/health/live "), strings.HasPrefix(line, "GET /v2/models/m/ready "):
			return ok("")
		case strings.HasPrefix(line, "GET /v2 "):
			return ok(`{"name":"raw","version":"1","extensions":[]}`)
		case strings.HasPrefix(line, "GET /v2/models/m "):
			return ok(`{"name":"m","platform":"raw","inputs":[{"name":"INPUT0","datatype":"FP32","shape":[1,4]}],` +
				`"outputs":[{"name":"OUTPUT0","datatype":"FP32","shape":[1,4]}]}`)
		case strings.HasPrefix(line, "POST /v2/models/m/infer "):
			return infer(head)
		}
		return "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
	}
}

// TestRunDoesNotFollowRedirects: a run whose target answers every
// inference request with a 302 to another host, or a 307 to another port
// of the same host with the run's Authorization set, fails every sample
// with outcome error and its status, on both HTTP tensor clients (pool and
// event loop) and on the generative client (an OpenAI chat run), and the
// Location hears nothing.
func TestRunDoesNotFollowRedirects(t *testing.T) {
	witness := startRaw(t, func(string) string {
		return "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 7\r\n\r\nwitness"
	})
	w := "http://" + witness.addr()
	auth := []Header{{Name: "Authorization", Value: "Bearer sk-run-secret"}}
	models := `{"object":"list","data":[{"id":"m"}]}`
	openai := func(status int) func(string) string {
		return func(head string) string {
			if strings.HasPrefix(head, "GET /v1/models ") {
				return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(models)) + "\r\n\r\n" + models
			}
			return redirectTo(status, w+"/v1/chat/completions")(head)
		}
	}
	for _, c := range []struct {
		name   string
		status int
		answer func(string) string
		client string
		api    genai.API
	}{
		{"pool/302", http.StatusFound, rawKServe(redirectTo(http.StatusFound, w+"/v2/models/m/infer")), "pool", ""},
		{"loop/302", http.StatusFound, rawKServe(redirectTo(http.StatusFound, w+"/v2/models/m/infer")), "loop", ""},
		{"pool/307", http.StatusTemporaryRedirect, rawKServe(redirectTo(http.StatusTemporaryRedirect, w+"/v2/models/m/infer")), "pool", ""},
		{"loop/307", http.StatusTemporaryRedirect, rawKServe(redirectTo(http.StatusTemporaryRedirect, w+"/v2/models/m/infer")), "loop", ""},
		{"openai-chat/307", http.StatusTemporaryRedirect, openai(http.StatusTemporaryRedirect), "", genai.APIOpenAIChat},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := witness.requests.Load()
			srv := startRaw(t, c.answer)
			spec := Spec{Target: "http://" + srv.addr(), Model: "m", Settings: shortSettings(t, trace.SingleStream), TotalSamples: 8, PerformanceSamples: 8,
				HTTPClient: c.client, API: c.api, Headers: auth}
			spec.Settings.MinQueryCount, spec.Settings.MaxQueryCount = 4, 4
			var logged bytes.Buffer
			out, err := Run(t.Context(), spec, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if got := witness.requests.Load() - before; got != 0 {
				t.Errorf("the redirect's target got %d requests, want none", got)
			}
			if err != nil {
				t.Fatal(err)
			}
			if loop := strings.Contains(logged.String(), "http_loop=true"); loop != (c.client == "loop") {
				t.Fatalf("client %q: the run says http_loop=%v", c.client, loop)
			}
			res := out.Result
			want := "HTTP " + strconv.Itoa(c.status)
			if res.SamplesFailed == 0 || res.SamplesFailed != res.SamplesIssued || len(res.Failures) != 1 ||
				res.Failures[0].Outcome != "error" || res.Failures[0].Status != want {
				t.Fatalf("issued %d, failed %d, failures %+v: want every sample failed, outcome error, status %s", res.SamplesIssued, res.SamplesFailed, res.Failures, want)
			}
			if strings.Contains(res.Failures[0].Example, "witness") {
				t.Errorf("failure example %q quotes the redirect's target", res.Failures[0].Example)
			}
		})
	}
}

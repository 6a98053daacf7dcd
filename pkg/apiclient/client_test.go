package apiclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

const token = "tok-3f9a-never-shown"

const runID = "20260101-000000-abcd"

func client(t *testing.T, base string, o Options) *Client {
	t.Helper()
	o.Token = token
	c, err := New(base, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func serve(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// noToken fails the test when err's text holds the token.
func noToken(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), token) {
		t.Errorf("the token is in the error: %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, base := range []string{"", "ftp://h:1", "http://", "http://u:pw@h:1", "http://h:1/?q=1", "http://h:1/#f", "::"} {
		_, err := New(base, Options{})
		if err == nil {
			t.Errorf("%q: accepted", base)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("%q: the credentials are printed: %v", base, err)
		}
	}
	c, err := New("http://127.0.0.1:1/prefix/", Options{})
	if err != nil || c.Base() != "http://127.0.0.1:1/prefix" {
		t.Errorf("a path prefix: %v %v", c, err)
	}
}

// TestRedirectNotFollowed: a redirect, to another host or the same, is an
// error naming it; the token reaches only the URL given.
func TestRedirectNotFollowed(t *testing.T) {
	var leaked atomic.Bool
	other := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
		fmt.Fprint(w, `{}`)
	})
	for _, code := range []int{301, 302, 307, 308} {
		base := serve(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other+r.URL.Path, code)
		})
		c := client(t, base, Options{})
		_, err := c.Status(t.Context(), runID)
		if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "redirect") {
			t.Errorf("%d: %v", code, err)
		}
		_, err = c.Submit(t.Context(), api.RunSpec{Target: "http://h:1", Model: "m"})
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%d: submit: %v", code, err)
		}
	}
	if leaked.Load() {
		t.Error("the token went to the host redirected to")
	}
}

// rawServer answers every connection with reply, then holds it or closes.
func rawServer(t *testing.T, reply func(net.Conn)) string {
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
				defer conn.Close()
				// Read the request's head, then answer.
				buf := make([]byte, 4096)
				conn.Read(buf)
				reply(conn)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestHostileAnswers: whatever the daemon answers, a call returns an error
// of the right kind, never hangs past its bounds, never panics.
func TestHostileAnswers(t *testing.T) {
	quick := Options{CallTimeout: 300 * time.Millisecond}
	cases := []struct {
		name  string
		reply func(net.Conn)
		want  error
	}{
		{"informational flood", func(c net.Conn) {
			for range 100 {
				if _, err := io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
					return
				}
			}
		}, ErrUnreachable},
		{"switching protocols", func(c net.Conn) { io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\n\r\n") }, nil},
		{"empty", func(c net.Conn) { io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") }, ErrProtocol},
		{"closed at once", func(net.Conn) {}, ErrUnreachable},
		{"truncated", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"id\":")
		}, ErrProtocol},
		{"not json", func(c net.Conn) { io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n<html>") }, ErrProtocol},
		{"no header", func(c net.Conn) { time.Sleep(2 * time.Second) }, ErrUnreachable},
		{"slow body", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
			for range 20 {
				if _, err := io.WriteString(c, " "); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}, ErrProtocol},
		{"endless header", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\n")
			line := "X-A: " + strings.Repeat("a", 1000) + "\r\n"
			for range 1000 {
				if _, err := io.WriteString(c, line); err != nil {
					return
				}
			}
		}, ErrUnreachable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := client(t, rawServer(t, c.reply), quick)
			start := time.Now()
			_, err := cl.Status(t.Context(), runID)
			if err == nil || c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			noToken(t, err)
		})
	}
}

// TestOversizedAndEndless: a JSON answer over MaxJSONBytes and a file over
// MaxFileBytes (announced, or endless) are refused, read no further.
func TestOversizedAndEndless(t *testing.T) {
	o := Options{MaxJSONBytes: 1000, MaxFileBytes: 1000, IdleTimeout: time.Second, FileTimeout: 5 * time.Second}
	endless := serve(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 4096)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	c := client(t, endless, o)
	if _, err := c.Status(t.Context(), runID); !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "over 1000 bytes") {
		t.Errorf("endless JSON: %v", err)
	}
	var buf bytes.Buffer
	n, err := c.File(t.Context(), runID, "result.json", &buf)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "over the bound") || n > 1001 {
		t.Errorf("endless file: %d bytes, %v", n, err)
	}
	announced := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.Write(make([]byte, 1000000))
	})
	c = client(t, announced, o)
	buf.Reset()
	if n, err := c.Samples(t.Context(), runID, &buf); !errors.Is(err, ErrProtocol) || n != 0 {
		t.Errorf("announced oversize: %d bytes, %v", n, err)
	}
}

// TestSlowFile: a file whose bytes stop coming fails after IdleTimeout;
// one that trickles past FileTimeout fails then.
func TestSlowFile(t *testing.T) {
	stall := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("abc"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	c := client(t, stall, Options{IdleTimeout: 200 * time.Millisecond})
	var buf bytes.Buffer
	_, err := c.File(t.Context(), runID, "result.json", &buf)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "no bytes came for 200ms") || buf.String() != "abc" {
		t.Errorf("stalled: %q %v", buf.String(), err)
	}
	trickle := serve(t, func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			w.Write([]byte("a"))
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	})
	c = client(t, trickle, Options{IdleTimeout: time.Second, FileTimeout: 400 * time.Millisecond})
	start := time.Now()
	_, err = c.File(t.Context(), runID, "result.json", io.Discard)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "took over 400ms") || time.Since(start) > 3*time.Second {
		t.Errorf("trickle: %v after %v", err, time.Since(start))
	}
}

// TestErrorAnswers: a 4xx or 5xx is an *APIError with the daemon's code,
// message and field, its text scrubbed of the token and the secrets; a
// body that is not an ErrorBody is shown short and scrubbed.
func TestErrorAnswers(t *testing.T) {
	base := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/runs":
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `{"error":{"code":"unavailable","message":"you said %s and hdr-secret-value","field":""}}`, r.Header.Get("Authorization"))
		default:
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "<html>proxy: %s %s</html>", r.Header.Get("Authorization"), strings.Repeat("z", 10000))
		}
	})
	c := client(t, base, Options{Secrets: []string{"hdr-secret-value"}})
	_, err := c.Submit(t.Context(), api.RunSpec{})
	ae, ok := errors.AsType[*APIError](err)
	if !ok || ae.Status != 503 || ae.Code != "unavailable" || ae.RetryAfter != 3*time.Second || strings.Contains(ae.Message, "hdr-secret-value") {
		t.Errorf("503: %#v", err)
	}
	noToken(t, err)
	_, err = c.Status(t.Context(), runID)
	ae, ok = errors.AsType[*APIError](err)
	if !ok || ae.Status != 502 || ae.Code != "" || len(ae.Message) > 1000 || !strings.Contains(ae.Message, "proxy") {
		t.Errorf("502: %v", err)
	}
	noToken(t, err)
}

// TestNamesChecked: a run id or file name the daemon gives that is not
// one is refused before it goes into a URL or a path.
func TestNamesChecked(t *testing.T) {
	var asked atomic.Int32
	base := serve(t, func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `{"id":"../../x","state":"queued"}`)
		}
	})
	c := client(t, base, Options{})
	if _, err := c.Submit(t.Context(), api.RunSpec{}); !errors.Is(err, ErrProtocol) {
		t.Errorf("id ../../x: %v", err)
	}
	for _, id := range []string{"", "..", "a/b", "a%2fb", "a b", strings.Repeat("a", 129)} {
		if _, err := c.Status(t.Context(), id); !errors.Is(err, ErrProtocol) {
			t.Errorf("id %q: %v", id, err)
		}
	}
	for _, name := range []string{"../x", "progress.json", "", "result.json/.."} {
		if _, err := c.File(t.Context(), runID, name, io.Discard); !errors.Is(err, ErrProtocol) {
			t.Errorf("file %q: %v", name, err)
		}
	}
	if asked.Load() != 1 {
		t.Errorf("%d requests went out, want the one submission", asked.Load())
	}
}

// TestCancelContext: a call in flight ends when its context does, long
// before the daemon would answer or the call's own timeout.
func TestCancelContext(t *testing.T) {
	asked := make(chan struct{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	base := rawServer(t, func(net.Conn) {
		close(asked) // one request: the call below
		<-release
	})
	c := client(t, base, Options{})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-asked
		cancel()
	}()
	start := time.Now()
	if _, err := c.Status(ctx, runID); !errors.Is(err, ErrUnreachable) {
		t.Errorf("cancelled: %v", err)
	}
	if took := time.Since(start); took > DefaultCallTimeout/2 {
		t.Errorf("the cancelled call took %v", took)
	}
}

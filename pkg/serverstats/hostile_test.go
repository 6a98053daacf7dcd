package serverstats

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// serveRaw answers every connection on a loopback listener with answer,
// then closes it.
func serveRaw(t *testing.T, answer func(net.Conn)) string {
	t.Helper()
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
			wg.Go(func() {
				defer c.Close()
				answer(c)
			})
		}
	})
	return ln.Addr().String()
}

// readRequest reads one request's head (a GET has no body).
func readRequest(c net.Conn) *http.Request {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	req, _ := http.ReadRequest(bufio.NewReader(c))
	return req
}

const okBody = `{"model_stats":[{"name":"m","version":"1","inference_count":3,"execution_count":3,` +
	`"inference_stats":{"success":{"count":3,"ns":300},"queue":{"count":3,"ns":30}}}]}`

// Hostile statistics endpoints: every one fails its read within the
// reader's bounds, as an error the result's note names, never as "not
// offered", never a panic or a hang, and the run's statistics say so.
func TestHostileEndpoints(t *testing.T) {
	cases := []struct {
		name   string
		answer func(c net.Conn, hold <-chan struct{})
		want   func(error) bool
	}{
		{"empty: closed at once", func(c net.Conn, hold <-chan struct{}) { readRequest(c) }, isTransport},
		{"truncated body", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + okBody[:40]))
		}, isTransport},
		{"truncated head", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Le"))
		}, isTransport},
		{"oversized, announced", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\n\r\n{"))
		}, isTooLarge},
		{"endless chunked body", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
			chunk := []byte("10000\r\n" + strings.Repeat(" ", 0x10000) + "\r\n")
			for {
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}, isTooLarge},
		{"slow: never answers", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			<-hold
		}, isTimeout},
		{"slow: dribbles its head", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			for _, b := range []byte("HTTP/1.1 200 OK\r\n") {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				select {
				case <-hold:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
			<-hold
		}, isTimeout},
		{"malformed JSON", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"model_stats"))
		}, isMalformed},
		{"out of order: a body before any head", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			c.Write([]byte(okBody + "\r\nHTTP/1.1 200 OK\r\n\r\n"))
		}, anyError},
		{"negative counts", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			b := `{"model_stats":[{"name":"m","inference_count":-3}]}`
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: " + itoa(len(b)) + "\r\n\r\n" + b))
		}, isMalformed},
		{"redirect", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 302 Found\r\nLocation: http://elsewhere.invalid/stats\r\nContent-Length: 0\r\n\r\n"))
		}, anyError},
		{"1xx then nothing", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n"))
			<-hold
		}, isTimeout},
		{"endless 1xx", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			for {
				if _, err := c.Write([]byte("HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n")); err != nil {
					return
				}
			}
		}, anyError},
		{"reset", func(c net.Conn, hold <-chan struct{}) {
			readRequest(c)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
		}, isTransport},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// hold keeps a slow peer's connection open until the subtest
			// ends (registered after serveRaw's cleanup: it runs first).
			hold := make(chan struct{})
			addr := serveRaw(t, func(conn net.Conn) { c.answer(conn, hold) })
			t.Cleanup(func() { close(hold) })
			r := open(t, "http://"+addr)
			r.timeout = 300 * time.Millisecond
			began := time.Now()
			x := Begin(t.Context(), r)
			if took := time.Since(began); took > 5*time.Second {
				t.Errorf("the read took %v", took)
			}
			t.Logf("read: %v", x.beforeErr)
			if x.Offered() || NotOffered(x.beforeErr) || !c.want(x.beforeErr) {
				t.Fatalf("error %v", x.beforeErr)
			}
			s := x.End(t.Context(), 1)
			if s.Offered || !strings.HasPrefix(s.Note, "statistics not read before the run: ") || len(s.Note) > 400 || s.Requests != 0 {
				t.Errorf("statistics %+v", s)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func anyError(err error) bool    { return err != nil }
func isTransport(err error) bool { return errors.Is(err, kserve.ErrTransport) }
func isTooLarge(err error) bool  { return errors.Is(err, kserve.ErrTooLarge) }
func isMalformed(err error) bool { return errors.Is(err, kserve.ErrMalformed) }
func isTimeout(err error) bool {
	return errors.Is(err, kserve.ErrTransport) && strings.Contains(err.Error(), "deadline")
}

package testtool

import (
	"bufio"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// RawHTTP is a hostile HTTP/1.1 server on loopback until the test ends: it
// reads each request (line, headers, a Content-Length body), counts it,
// and writes answer(requestLine)'s bytes as they are, whatever they say
// (a redirect, a broken head), on the same connection for as long as the
// client keeps it. It returns the address and the count of requests read.
func RawHTTP(t testing.TB, answer func(requestLine string) string) (addr string, requests *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	requests = new(atomic.Int64)
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
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				r := textproto.NewReader(bufio.NewReader(c))
				for {
					line, err := r.ReadLine()
					if err != nil {
						return
					}
					h, err := r.ReadMIMEHeader()
					if err != nil {
						return
					}
					n, _ := strconv.Atoi(h.Get("Content-Length"))
					if _, err := io.CopyN(io.Discard, r.R, int64(n)); err != nil {
						return
					}
					requests.Add(1)
					if _, err := io.WriteString(c, answer(line)); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String(), requests
}

// Answer is an answer for RawHTTP that is the same for every request.
func Answer(s string) func(string) string { return func(string) string { return s } }

// RequestPath is the path of a request line ("POST /v2/models/m/infer
// HTTP/1.1"), without its query.
func RequestPath(requestLine string) string {
	f := strings.Fields(requestLine)
	if len(f) < 2 {
		return ""
	}
	p, _, _ := strings.Cut(f[1], "?")
	return p
}

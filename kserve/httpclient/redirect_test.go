package httpclient

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// rawAnswers answers every HTTP/1.1 request with answer's exact bytes and
// counts the requests.
func rawAnswers(t *testing.T, answer string) (addr string, requests *atomic.Int64) {
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
					if _, err := r.ReadLine(); err != nil { // the request line
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
					if _, err := io.WriteString(c, answer); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String(), requests
}

// TestRedirectIsAnAnswer: a 3xx to any request (health, metadata, config,
// inference) is an error carrying the status and the Location resolved
// against the request's URL (prefix included; a password in it
// redacted), and the client sends
// nothing to the Location, with the run's Authorization set or not.
func TestRedirectIsAnAnswer(t *testing.T) {
	witness, heard := rawAnswers(t, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	for _, c := range []struct {
		status, loc string
		code        int
		want        func(path string) string // the Location expected for a request for path
	}{
		{"302 Found", "http://" + witness + "/v2/x", 302, func(string) string { return "http://" + witness + "/v2/x" }},
		{"307 Temporary Redirect", "http://" + witness + "/v2/x", 307, func(string) string { return "http://" + witness + "/v2/x" }},
		{"301 Moved Permanently", "moved", 301, nil},
		{"303 See Other", "http://u:pw@" + witness + "/v2/x", 303, func(string) string { return "http://u:xxxxx@" + witness + "/v2/x" }},
	} {
		t.Run(c.status, func(t *testing.T) {
			addr, _ := rawAnswers(t, "HTTP/1.1 "+c.status+"\r\nLocation: "+c.loc+"\r\nContent-Length: 0\r\n\r\n")
			cl, err := New("http://"+addr+"/p", Headers([]kserve.Header{{Name: "Authorization", Value: "Bearer sk-run-secret"}}))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			want := c.want
			if want == nil {
				want = func(path string) string {
					return "http://" + addr + "/p" + path[:len(path)-len(lastSegment(path))] + "moved"
				}
			}
			p, err := cl.PrepareInfer(&kserve.InferRequest{Model: "m", Inputs: []kserve.Tensor{{Name: "I", Datatype: kserve.FP32, Shape: []int64{1}, Data: make([]byte, 4)}}})
			if err != nil {
				t.Fatal(err)
			}
			calls := []struct {
				path string
				call func(ctx context.Context) error
			}{
				{"/v2/health/live", func(ctx context.Context) error { _, err := cl.ServerLive(ctx); return err }},
				{"/v2", func(ctx context.Context) error { _, err := cl.ServerMetadata(ctx); return err }},
				{"/v2/models/m", func(ctx context.Context) error { _, err := cl.ModelMetadata(ctx, "m", ""); return err }},
				{"/v2/models/m/ready", func(ctx context.Context) error { _, err := cl.ModelReady(ctx, "m", ""); return err }},
				{"/v2/models/m/config", func(ctx context.Context) error { _, err := cl.ModelConfig(ctx, "m", ""); return err }},
				{"/v2/models/m/infer", func(ctx context.Context) error { _, err := cl.InferPrepared(ctx, p); return err }},
				{"/v2/models/m/infer", func(ctx context.Context) error { return cl.InferPreparedCheck(ctx, p) }},
			}
			for _, k := range calls {
				err := k.call(t.Context())
				ke, ok := errors.AsType[*kserve.Error](err)
				if !ok || ke.HTTPStatus != c.code || ke.Location != want(k.path) {
					t.Errorf("%s: %#v: want a *kserve.Error, HTTP %d, Location %s", k.path, err, c.code, want(k.path))
				}
			}
			if n := heard.Load(); n != 0 {
				t.Errorf("the Location got %d requests, want none", n)
			}
		})
	}
}

func lastSegment(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

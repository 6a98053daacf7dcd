package sutproxytest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Exchange is one HTTP request a test's client sent through RecordHTTP's
// proxy and the answer sutproxy gave: what the server was sent (a
// generative request's prompt or messages, its max_tokens) and what it
// said (an event stream, whole).
type Exchange struct {
	// ID is the request's X-Request-Id ("" without one).
	ID, Method, Path  string
	Request, Response []byte
}

// Requests is RecordHTTP's record, in the order the answers ended.
type Requests struct {
	mu  sync.Mutex
	all []Exchange
}

// All is a copy of the record so far.
func (r *Requests) All() []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Exchange(nil), r.all...)
}

// maxRecorded bounds a recorded body: a test's requests are small.
const maxRecorded = 64 << 20

// RecordHTTP starts a proxy in front of upstream (sutproxy's http://
// target) that records every request and its answer, passing the answer
// on as it comes (an event stream, flushed read by read, so token times
// stay the server's). It returns the proxy's http:// URL; the record is
// complete once close has returned (every handler has ended), which the
// test's cleanup also calls.
func RecordHTTP(t testing.TB, upstream string) (target string, rec *Requests, close func()) {
	t.Helper()
	rec = &Requests{}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, maxRecorded))
		req, err := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		var got bytes.Buffer
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				w.(http.Flusher).Flush()
				if got.Len() < maxRecorded {
					got.Write(buf[:n])
				}
			}
			if err != nil {
				break
			}
		}
		rec.mu.Lock()
		rec.all = append(rec.all, Exchange{ID: r.Header.Get("X-Request-Id"), Method: r.Method, Path: r.URL.Path, Request: body, Response: got.Bytes()})
		rec.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, rec, srv.Close
}

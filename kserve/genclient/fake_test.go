package genclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve/httpclient"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// fakeLLM answers the four APIs under any path prefix: tokens responses of
// one token each, Triton's with output_ids, OpenAI's usage when asked.
type fakeLLM struct {
	tokens int
	// refuseStreamOptions answers 400 naming stream_options when a
	// request has them (as some OpenAI-compatible servers do).
	refuseStreamOptions bool

	mu     sync.Mutex
	paths  []string
	bodies []map[string]any
	hdrs   []http.Header
	hosts  []string
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"error":"bad JSON"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.bodies = append(f.bodies, body)
	f.hdrs = append(f.hdrs, r.Header.Clone())
	f.hosts = append(f.hosts, r.Host)
	f.mu.Unlock()
	so, hasSO := body["stream_options"].(map[string]any)
	if hasSO && f.refuseStreamOptions {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"object":"error","message":"[{'loc': ('body', 'stream_options'), 'msg': 'Extra inputs are not permitted'}]","code":400}`))
		return
	}
	stream, _ := body["stream"].(bool)
	triton := strings.HasSuffix(r.URL.Path, "/generate") || strings.HasSuffix(r.URL.Path, "/generate_stream")
	chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case triton:
			fmt.Fprintf(w, `{"model_name":"m","text_output":"%s","output_ids":[%s]}`, words(f.tokens), ids(f.tokens))
		case chat:
			fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":"%s"}}],"usage":{"prompt_tokens":3,"completion_tokens":%d}}`, words(f.tokens), f.tokens)
		default:
			fmt.Fprintf(w, `{"choices":[{"text":"%s"}],"usage":{"prompt_tokens":3,"completion_tokens":%d}}`, words(f.tokens), f.tokens)
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	if chat {
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n")
	}
	for i := range f.tokens {
		switch {
		case triton:
			fmt.Fprintf(w, "data: {\"model_name\":\"m\",\"text_output\":\" w%d\",\"output_ids\":[%d]}\n\n", i, i)
		case chat:
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\" w%d\"}}]}\n\n", i)
		default:
			fmt.Fprintf(w, "data: {\"choices\":[{\"text\":\" w%d\"}]}\n\n", i)
		}
		fl.Flush()
	}
	if triton {
		return
	}
	if hasSO && so["include_usage"] == true {
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":%d}}\n\n", f.tokens)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func words(n int) string { return strings.TrimSpace(strings.Repeat(" w", n)) }

func ids(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprint(i)
	}
	return strings.Join(s, ",")
}

// serve runs h on a loopback server until the test ends; it returns the
// base URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// rec is a genai.Handler that records what it hears.
type rec struct {
	mu    sync.Mutex
	ns    []int
	ats   []time.Time
	calls []time.Time // when Tokens was called
	usage genai.Usage
	err   error
	endAt time.Time
	ends  int
	done  chan struct{}
	onTok chan struct{} // when not nil, told of each Tokens call
	hook  func(i int)   // when not nil, called in Tokens for response i
}

func newRec() *rec { return &rec{done: make(chan struct{})} }

func (r *rec) Tokens(at time.Time, n int) {
	now := time.Now()
	r.mu.Lock()
	r.ns, r.ats, r.calls = append(r.ns, n), append(r.ats, at), append(r.calls, now)
	i := len(r.ns) - 1
	r.mu.Unlock()
	if r.hook != nil {
		r.hook(i)
	}
	if r.onTok != nil {
		r.onTok <- struct{}{}
	}
}

func (r *rec) End(at time.Time, u genai.Usage, err error) {
	r.mu.Lock()
	r.usage, r.err, r.endAt = u, err, at
	r.ends++
	r.mu.Unlock()
	close(r.done) // a second End panics the test
}

// wait waits for End; a request that does not end in 10 s hangs.
func (r *rec) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("no End after 10 s: the request hangs")
	}
}

func (r *rec) tokens() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, x := range r.ns {
		n += x
	}
	return n
}

func generate(t *testing.T, c *Client, ctx context.Context, req *genai.Request) *rec {
	t.Helper()
	r := newRec()
	c.Generate(ctx, req, r)
	r.wait(t)
	// End may come before the rest of the body is read and the connection
	// pooled (after OpenAI's [DONE]): wait for that, so that a next
	// request finds it.
	c.wg.Wait()
	return r
}

func newClient(t *testing.T, base string, api genai.API, o Options, hopts ...httpclient.Option) *Client {
	t.Helper()
	c, err := New(base, api, o, hopts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// statusHandler answers every request with status and body.
func statusHandler(status int, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(body))
	})
}

// seen is what the server has seen so far, read under its lock.
type seen struct {
	paths  []string
	bodies []map[string]any
	hdrs   []http.Header
	hosts  []string
}

func (f *fakeLLM) seen() seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return seen{paths: f.paths[:len(f.paths):len(f.paths)], bodies: f.bodies[:len(f.bodies):len(f.bodies)], hdrs: f.hdrs[:len(f.hdrs):len(f.hdrs)], hosts: f.hosts[:len(f.hosts):len(f.hosts)]}
}

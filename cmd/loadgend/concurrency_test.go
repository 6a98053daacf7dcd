package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// inflightCounter is a reverse proxy in front of a server that counts the
// inference requests it holds at once: one is let go when its response
// begins, before any byte of it can reach the client.
type inflightCounter struct {
	next          http.Handler
	inflight, max atomic.Int64
}

func (c *inflightCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/infer") {
		c.next.ServeHTTP(w, r)
		return
	}
	n := c.inflight.Add(1)
	for m := c.max.Load(); n > m && !c.max.CompareAndSwap(m, n); m = c.max.Load() {
	}
	rw := &releaseOnWrite{ResponseWriter: w, release: func() { c.inflight.Add(-1) }}
	defer rw.done()
	c.next.ServeHTTP(rw, r)
}

type releaseOnWrite struct {
	http.ResponseWriter
	once    sync.Once
	release func()
}

func (w *releaseOnWrite) done() { w.once.Do(w.release) }

func (w *releaseOnWrite) WriteHeader(code int) {
	w.done()
	w.ResponseWriter.WriteHeader(code)
}

func (w *releaseOnWrite) Write(b []byte) (int, error) {
	w.done()
	return w.ResponseWriter.Write(b)
}

// --concurrency 4 keeps exactly 4 requests at the server, never more, and
// reports a throughput with no MLPerf verdict: result.json's closed_loop,
// validity N/A, no LoadGen logs.
func TestConcurrencyKeepsNOutstanding(t *testing.T) {
	p := startProxy(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:2ms,instances=16")
	up, err := url.Parse("http://" + p.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	counter := &inflightCounter{next: httputil.NewSingleHostReverseProxy(up)}
	front := httptest.NewServer(counter)
	t.Cleanup(front.Close)
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := runCommand([]string{"--target", front.URL, "--model", "m", "--concurrency", "4",
		"--min-duration-ms", "300", "--min-query-count", "1", "--out", dir}, &out, &errb)
	if code != exitValid {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if got := counter.max.Load(); got != 4 {
		t.Errorf("the server held at most %d requests at once, want exactly 4", got)
	}
	res, err := runlog.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	cl := res.ClosedLoop
	if cl == nil || cl.Concurrency != 4 || cl.MaxOutstanding != 4 || res.SamplesCompleted == 0 || res.Validity != loadgen.ValidityNA {
		t.Errorf("result: closed_loop %+v, %d samples completed, validity %q", cl, res.SamplesCompleted, res.Validity)
	}
	if _, err := os.Stat(filepath.Join(dir, runlog.SummaryFile)); !os.IsNotExist(err) {
		t.Errorf("%s written for a closed loop (%v): it would read as an MLPerf result", runlog.SummaryFile, err)
	}
	if s := out.String(); !strings.Contains(s, "Closed loop, concurrency 4 (not an MLPerf scenario") || strings.Contains(s, ": VALID") || strings.Contains(s, ": INVALID") {
		t.Errorf("verdict line %q", s)
	}
}

func TestConcurrencyFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency", "0"}, "--concurrency: must be in [1, 4096], got 0"},
		{[]string{"--concurrency", "5000"}, "--concurrency: must be in [1, 4096], got 5000"},
		{[]string{"--concurrency", "4", "--scenario", "Server"}, "--concurrency: a closed loop issues SingleStream's samples; the scenario is Server"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"--target", "http://127.0.0.1:1", "--model", "m"}, tc.args...)
			if code := runCommand(args, &out, &errb); code != exitError {
				t.Fatalf("exit %d, want %d", code, exitError)
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr %q lacks %q", errb.String(), tc.want)
			}
		})
	}
}

package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
)

// seededDataDir is a data directory holding one real finished run (a short
// Server run against sutproxy) and n-1 copies of it.
func seededDataDir(tb testing.TB, n int) string {
	tb.Helper()
	var dir string
	s, base := startDaemon(tb, func(c *Config) { dir = c.DataDir })
	target := "http://" + startSUT(tb).HTTPAddr()
	code, b := do(tb, "POST", base+"/v1/runs", specFor(target, 300, ""))
	if code != http.StatusAccepted {
		tb.Fatalf("POST /v1/runs = %d %s", code, b)
	}
	var created api.RunCreated
	if err := json.Unmarshal(b, &created); err != nil {
		tb.Fatal(err)
	}
	id := created.ID
	if st := waitState(tb, base, id); st.State != api.StateDone {
		tb.Fatalf("the seed run ended %s: %s", st.State, st.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		tb.Fatal(err)
	}
	SeedRuns(tb, dir, n-1)
	return dir
}

// BenchmarkListRuns500 is one GET /v1/runs?limit=500 over 500 finished runs
// (issue 17 #5: it read and parsed every run's files on each request).
func BenchmarkListRuns500(b *testing.B) {
	dir := seededDataDir(b, 500)
	h := newTestService(b, dir).handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, localRequest("GET", "/v1/runs?limit=500"))
	var list api.RunList
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &list) != nil || len(list.Runs) != 500 || list.Runs[0].Validity == "" {
		b.Fatalf("GET /v1/runs?limit=500 = %d, %d bytes", rec.Code, rec.Body.Len())
	}
	b.SetBytes(int64(rec.Body.Len()))
	b.ReportAllocs()
	for b.Loop() {
		w := &countingWriter{header: http.Header{}}
		h.ServeHTTP(w, localRequest("GET", "/v1/runs?limit=500"))
		if w.code != http.StatusOK || w.n != rec.Body.Len() {
			b.Fatalf("GET /v1/runs?limit=500 = %d, %d bytes", w.code, w.n)
		}
	}
}

// countingWriter is a ResponseWriter that keeps nothing of the body, so
// the benchmark counts the handler's allocations, not a recorder's copy.
type countingWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(b)
	return len(b), nil
}

// BenchmarkListRunsFiltered is GET /v1/runs over 1,000 finished runs with
// the console's filters: one that matches every run (a page of 500, as
// BenchmarkListRuns500's) and one that matches none (the whole history
// looked at for an empty page: the worst a filter makes a page do).
func BenchmarkListRunsFiltered(b *testing.B) {
	dir := seededDataDir(b, 1000)
	h := newTestService(b, dir).handler()
	for _, c := range []struct{ name, query string }{
		{"all-match", "/v1/runs?limit=500&model=identity&scenario=Server"},
		{"none-match", "/v1/runs?limit=500&model=nobody"},
	} {
		b.Run(c.name, func(b *testing.B) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, localRequest("GET", c.query))
			if rec.Code != http.StatusOK {
				b.Fatalf("GET %s = %d %s", c.query, rec.Code, rec.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				w := &countingWriter{header: http.Header{}}
				h.ServeHTTP(w, localRequest("GET", c.query))
				if w.code != http.StatusOK || w.n != rec.Body.Len() {
					b.Fatalf("GET %s = %d, %d bytes", c.query, w.code, w.n)
				}
			}
		})
	}
}

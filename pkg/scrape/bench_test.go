package scrape

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkScrapeManySeries is one scrape of an endpoint with 100,000
// series (bench/hostilemetrics' /series) at the default bounds: the
// read, the cut, the parse, the summary and the file. Its CPU and
// allocations are what such an endpoint costs a run each time it is
// tried.
func BenchmarkScrapeManySeries(b *testing.B) {
	var body bytes.Buffer
	fmt.Fprintln(&body, "# TYPE hostile_series gauge")
	for i := range 100_000 {
		fmt.Fprintf(&body, "hostile_series{i=\"%d\"} %d\n", i, i)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(body.Bytes())
	}))
	defer srv.Close()
	b.ReportAllocs()
	for b.Loop() {
		s, err := New(Config{URLs: []string{srv.URL}, Out: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		s.Start(b.Context())
		if _, err := s.Stop(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

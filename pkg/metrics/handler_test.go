package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// /metrics serves the text format by default (classic buckets only) and
// the protobuf format, which carries native histograms, when asked.
func TestHandler(t *testing.T) {
	m, reg := newTest(t)
	m.Observer().Issued(0, 1, 0)
	m.Observer().Completed(0, 1, time.Millisecond, nil)
	cases := []struct {
		name, accept, wantType string
		wantBody               []string
	}{
		{"text", "", "text/plain", []string{
			`loadgend_sample_latency_seconds_bucket{le="0.001"} 1`,
			`loadgend_samples_completed_total 1`,
			`loadgend_run_state{state="running"} 0`,
			"go_goroutines ", "process_cpu_seconds_total "}},
		{"protobuf", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited", "application/vnd.google.protobuf", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			rec := httptest.NewRecorder()
			Handler(reg).ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), c.wantType) {
				t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
			}
			for _, w := range c.wantBody {
				if !strings.Contains(rec.Body.String(), w) {
					t.Errorf("body lacks %q", w)
				}
			}
		})
	}
}

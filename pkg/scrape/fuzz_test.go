package scrape

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// FuzzLines: whatever a server sends, parsing it, turning it into lines
// and summarising them never panics, and every line kept encodes as JSON
// (server_metrics.jsonl's).
func FuzzLines(f *testing.F) {
	for _, seed := range []string{
		"# TYPE c counter\nc{a=\"1\"} 3\n",
		"# TYPE h histogram\nh_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.3\nh_count 2\n",
		"# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 2\ns_count 3\n",
		"g NaN\nu +Inf\n# EOF\n",
		"x{a=\"1\" 3\n",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, openMetrics bool) {
		ct := "text/plain; version=0.0.4"
		if openMetrics {
			ct = "application/openmetrics-text; version=1.0.0"
		}
		fams, err := decode(&boundedReader{r: bytes.NewReader(body), left: 1 << 20}, format(ct))
		if err != nil {
			return
		}
		sum := serverview.NewSummarizer(100)
		// Two scrapes of the same body a hair apart: rates over a tiny
		// span are where a finite value overflows.
		for _, at := range []float64{0, 1e-300} {
			lines(fams, at, "http://h/metrics", nil, func(l *serverview.Line) {
				l.T = at
				if sum.Add(l) {
					if _, err := json.Marshal(l); err != nil {
						t.Fatalf("line %+v does not encode: %v", l, err)
					}
				}
			})
		}
		if _, err := json.Marshal(sum.Series()); err != nil {
			t.Fatalf("summary does not encode: %v", err)
		}
	})
}

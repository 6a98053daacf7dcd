package report

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkReadServerMetrics reads a server_metrics.jsonl as a run with
// the default 5,000 series writes it, 20 scrapes, ten of the series ones
// the report draws: its MB/s say how long a long run's file takes (an
// hour at one scrape a second is 180 such files).
func BenchmarkReadServerMetrics(b *testing.B) {
	var buf bytes.Buffer
	for s := range 20 {
		for i := range 5000 {
			name := fmt.Sprintf("vllm:some_other_metric_%d", i%50)
			if i < 10 {
				name = "vllm:num_requests_waiting"
			}
			fmt.Fprintf(&buf, `{"t":%d.05,"endpoint":"http://127.0.0.1:8000/metrics","name":%q,"labels":{"model_name":"m","engine":"%d"},"type":"gauge","value":%d}`+"\n", s, name, i, i%7)
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ss, err := readServerMetrics(bytes.NewReader(data), 20.0/maxBins, maxMetricsBytes)
		if err != nil || len(ss.Tracks) != maxTracksPerKind || ss.Lines != 100_000 {
			b.Fatalf("%v: %d tracks, %d lines", err, len(ss.Tracks), ss.Lines)
		}
	}
	b.ReportMetric(float64(b.N)*100_000/b.Elapsed().Seconds(), "lines/s")
}

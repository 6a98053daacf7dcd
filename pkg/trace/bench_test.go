package trace

import (
	"io"
	"testing"
)

// serverTrace270k: min_query_count 270336 (v0.5 MultiStream's count, a
// common large Server run) dominates 10 s at 10,000 qps.
func serverTrace270k() Requested {
	req := DefaultSettings()
	req.Scenario = Server
	req.ServerTargetQPS = 10000
	req.MinQueryCount = 270336
	req.QSLRNGSeed = officialQSLSeed
	req.SampleIndexRNGSeed = officialSampleSeed
	req.ScheduleRNGSeed = officialScheduleSeed
	return req
}

func BenchmarkGenerateServer270k(b *testing.B) {
	req := serverTrace270k()
	qsl := QSL{TotalSampleCount: 50000, PerformanceSampleCount: 1024}
	b.ReportAllocs()
	for b.Loop() {
		tr, err := New(req, qsl)
		if err != nil {
			b.Fatal(err)
		}
		if tr.Len() != 270336 {
			b.Fatalf("%d queries", tr.Len())
		}
	}
}

func BenchmarkWriteServer270k(b *testing.B) {
	tr, err := New(serverTrace270k(), QSL{TotalSampleCount: 50000, PerformanceSampleCount: 1024})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, tr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCursorServer is the issuer's cost a query: one Next of a Server
// trace (a sample position and an exponential inter-arrival draw).
func BenchmarkCursorServer(b *testing.B) {
	tr, err := New(serverTrace270k(), QSL{TotalSampleCount: 50000, PerformanceSampleCount: 1024})
	if err != nil {
		b.Fatal(err)
	}
	c := tr.Cursor()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Next(); !ok {
			c.Reset()
		}
	}
}

// BenchmarkCountServer60M is Generate's counting pass for an official-length
// Server run at full rate: 600 s at 100,000 QPS, 60 million queries.
func BenchmarkCountServer60M(b *testing.B) {
	req := serverTrace270k()
	req.ServerTargetQPS = 100_000
	req.MinDurationMs = 600_000
	b.ReportAllocs()
	for b.Loop() {
		tr, err := New(req, QSL{TotalSampleCount: 50000, PerformanceSampleCount: 1024})
		if err != nil {
			b.Fatal(err)
		}
		if n := tr.Len(); n < 59_000_000 || n > 61_000_000 {
			b.Fatalf("%d queries", n)
		}
	}
}

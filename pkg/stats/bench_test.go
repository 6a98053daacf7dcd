package stats

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// benchRecordSize bounds a benchmark record's memory; the record is replaced
// (timer stopped) each time it fills.
const benchRecordSize = 1 << 22

func BenchmarkRecord(b *testing.B) {
	r, _ := NewLatencyRecord(benchRecordSize)
	b.ReportAllocs()
	b.ReportMetric(8, "bytes/sample")
	i := 0
	for b.Loop() {
		if i == benchRecordSize {
			b.StopTimer()
			r, _ = NewLatencyRecord(benchRecordSize)
			i = 0
			b.StartTimer()
		}
		if err := r.Record(i, time.Duration(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkRecordParallel: goroutines claim blocks of 1024 indices, as an
// engine's completion handlers would record interleaved sample numbers.
func BenchmarkRecordParallel(b *testing.B) {
	r, _ := NewLatencyRecord(0, WithGrowth())
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var i, end int
		for pb.Next() {
			if i == end {
				end = int(next.Add(1024)) % (1 << 30)
				i = end - 1024
			}
			// Indices repeat after 2^30; ignore ErrAlreadyRecorded then.
			_ = r.Record(i, time.Duration(i))
			i++
		}
	})
}

func benchLatencies(n int) *LatencyRecord {
	rng := rand.New(rand.NewPCG(3, 4))
	r, _ := NewLatencyRecord(n)
	for i := range n {
		// Log-normal-ish: 1 ms median with a long tail.
		_ = r.Record(i, time.Duration(float64(time.Millisecond)*(0.5+rng.ExpFloat64())))
	}
	return r
}

// BenchmarkPercentiles270336: sort the exact record of a 270,336-query run
// and read LoadGen's percentile set and summary.
func BenchmarkPercentiles270336(b *testing.B) {
	r := benchLatencies(270336)
	b.ReportAllocs()
	for b.Loop() {
		l := r.Latencies()
		for _, p := range []float64{0.5, 0.9, 0.95, 0.97, 0.99, 0.999} {
			if _, err := l.Percentile(p); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := l.Summary(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEarlyStopping270336: the MultiStream p99 estimate on 270,336
// queries with a fresh finder, as LoadGen computes it once per run.
func BenchmarkEarlyStopping270336(b *testing.B) {
	l := benchLatencies(270336).Latencies()
	b.ReportAllocs()
	for b.Loop() {
		f, _ := NewMinPassingFinder(0.99, EarlyStoppingConfidence)
		if !f.EstimatePercentile(l).Met {
			b.Fatal("not met")
		}
	}
}

func BenchmarkLiveHistogramRecord(b *testing.B) {
	l := NewLiveHistogram()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		d := time.Duration(1)
		for pb.Next() {
			d = (d*7 + 12345) % (10 * time.Millisecond)
			l.Record(d)
		}
	})
}

// BenchmarkMinPassing: h(t) on a fresh finder, as LoadGen's Server verdict
// computes it once at the end of a run.
func BenchmarkMinPassing(b *testing.B) {
	for _, c := range []struct {
		p float64
		t int64
	}{{0.9, 100}, {0.9, 10000}, {0.9, 100000}, {0.99, 8550}, {0.9999, 243}} {
		b.Run(fmt.Sprintf("p=%v/t=%d", c.p, c.t), func(b *testing.B) {
			for b.Loop() {
				f, _ := NewMinPassingFinder(c.p, EarlyStoppingConfidence)
				f.MinPassing(c.t)
			}
		})
	}
}

// BenchmarkEarlyStoppingP90: the SingleStream p90 estimate on 10^6
// latencies (t ≈ 10^5) with a fresh finder.
func BenchmarkEarlyStoppingP90(b *testing.B) {
	l := benchLatencies(1000000).Latencies()
	for b.Loop() {
		f, _ := NewMinPassingFinder(0.9, EarlyStoppingConfidence)
		if !f.EstimatePercentile(l).Met {
			b.Fatal("not met")
		}
	}
}

// BenchmarkLatenciesPercentiles: LoadGen's percentile set and summary of a
// 12M-sample record (600 s at 20,000 QPS), read from the record itself
// (scanned) and, for comparison, from the sorted copy Latencies used to
// make (sorted-copy: the copy and its radix sort, as before issue 28).
// B/op is what the statistics cost beyond the record's 8 bytes a sample.
func BenchmarkLatenciesPercentiles(b *testing.B) {
	const n = 12_000_000
	r := benchLatencies(n)
	ps := []float64{0.5, 0.9, 0.95, 0.97, 0.99, 0.999}
	run := func(b *testing.B, latencies func() Latencies) {
		b.ReportAllocs()
		for b.Loop() {
			l := latencies()
			if _, err := l.Percentiles(ps); err != nil {
				b.Fatal(err)
			}
			if _, err := l.Summary(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("scanned", func(b *testing.B) { run(b, r.Latencies) })
	b.Run("sorted-copy", func(b *testing.B) {
		run(b, func() Latencies {
			out := make([]time.Duration, 0, n)
			r.Each(0, n, func(_ int, d time.Duration) { out = append(out, d) })
			return sortedLatencies(out)
		})
	})
}

// BenchmarkFinish: completing an in-flight sample (an atomic load and
// compare-and-swap of its slot), to compare with BenchmarkRecord's plain
// store. The Starts are outside the timer.
func BenchmarkFinish(b *testing.B) {
	fresh := func() *LatencyRecord {
		r, _ := NewLatencyRecord(benchRecordSize)
		for i := range benchRecordSize {
			_ = r.Start(i, int64(i))
		}
		return r
	}
	r := fresh()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == benchRecordSize {
			b.StopTimer()
			r, i = fresh(), 0
			b.StartTimer()
		}
		if _, ok := r.Finish(i, int64(i)+1000); !ok {
			b.Fatal("not in flight")
		}
		i++
	}
}

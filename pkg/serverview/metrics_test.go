package serverview

import (
	"encoding/json"
	"math"
	"testing"
)

func val(v float64) *float64 { return &v }

func line(t float64, name, typ string, v float64, labels map[string]string) *Line {
	return &Line{T: t, Endpoint: "http://h/metrics", Name: name, Type: typ, Value: val(v), Labels: labels}
}

func hist(t, count, sum float64, les []string, counts []float64) *Line {
	bs := make([]Bucket, len(les))
	for i := range les {
		bs[i] = Bucket{LE: les[i], Count: counts[i]}
	}
	return &Line{T: t, Endpoint: "http://h/metrics", Name: "h", Type: Histogram, Count: val(count), Sum: val(sum), Buckets: bs}
}

func near(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil, want %g", what, want)
	}
	if math.Abs(*got-want) > 1e-9*max(1, math.Abs(want)) {
		t.Fatalf("%s = %g, want %g", what, *got, want)
	}
}

func TestCounterDeltaAndRate(t *testing.T) {
	s := NewSummarizer(0)
	for i, v := range []float64{100, 110, 130, 160} {
		s.Add(line(float64(i), "c_total", Counter, v, nil))
	}
	got := s.Series()
	if len(got) != 1 {
		t.Fatalf("%d series, want 1", len(got))
	}
	near(t, "delta", got[0].Delta, 60)
	near(t, "rate", got[0].Rate, 20)
	if got[0].Scrapes != 4 || got[0].Resets != 0 {
		t.Fatalf("scrapes %d resets %d, want 4 and 0", got[0].Scrapes, got[0].Resets)
	}
}

// A counter that goes back was reset: the increase after it counts from
// 0, never negative.
func TestCounterResetNeverNegative(t *testing.T) {
	s := NewSummarizer(0)
	for i, v := range []float64{100, 120, 5, 15} {
		s.Add(line(float64(i), "c_total", Counter, v, nil))
	}
	got := s.Series()[0]
	near(t, "delta", got.Delta, 20+5+10)
	if got.Resets != 1 {
		t.Fatalf("resets %d, want 1", got.Resets)
	}
}

func TestGaugeFirstMeanMaxLast(t *testing.T) {
	s := NewSummarizer(0)
	for i, v := range []float64{2, 8, 5, 1} {
		s.Add(line(float64(i), "q", Gauge, v, map[string]string{"model": "m"}))
	}
	got := s.Series()[0]
	near(t, "first", got.First, 2)
	near(t, "mean", got.Mean, 4)
	near(t, "max", got.Max, 8)
	near(t, "last", got.Last, 1)
	if got.Delta != nil || got.Count != nil {
		t.Fatalf("a gauge has a counter's or a histogram's fields: %+v", got)
	}
}

// The quantiles come from the bucket deltas over the run, not from the
// buckets as they stood at the end.
func TestHistogramDeltasAndQuantiles(t *testing.T) {
	les := []string{"0.1", "0.2", "0.4", "+Inf"}
	s := NewSummarizer(0)
	// Before the run: 1000 observations, all under 0.1.
	s.Add(hist(0, 1000, 50, les, []float64{1000, 1000, 1000, 1000}))
	// During it: 100 more, 50 in (0.1, 0.2], 50 in (0.2, 0.4].
	s.Add(hist(1, 1100, 50+22.5, les, []float64{1000, 1050, 1100, 1100}))
	got := s.Series()[0]
	near(t, "count", got.Count, 100)
	near(t, "sum", got.Sum, 22.5)
	near(t, "mean", got.Mean, 0.225)
	// rank 50 of 100 ends bucket (0.1, 0.2]: its upper bound.
	near(t, "p50", got.P50Estimate, 0.2)
	// rank 99: 49 of 50 into (0.2, 0.4].
	near(t, "p99", got.P99Estimate, 0.2+0.2*49/50)
}

// PromQL's histogram_quantile: a rank in +Inf's bucket is the highest
// finite bound; no observations, no estimate.
func TestQuantileEdges(t *testing.T) {
	layout := []Bucket{{LE: "1"}, {LE: "+Inf"}}
	near(t, "in +Inf", quantile(0.99, layout, []float64{10, 100}), 1)
	near(t, "first bucket from 0", quantile(0.5, layout, []float64{10, 10}), 0.5)
	if q := quantile(0.5, layout, []float64{0, 0}); q != nil {
		t.Fatalf("no observations: %g, want nil", *q)
	}
	if q := quantile(0.5, []Bucket{{LE: "1"}, {LE: "2"}}, []float64{1, 2}); q != nil {
		t.Fatalf("no +Inf bucket: %g, want nil", *q)
	}
}

func TestHistogramResetCountsFromZero(t *testing.T) {
	les := []string{"1", "+Inf"}
	s := NewSummarizer(0)
	s.Add(hist(0, 10, 5, les, []float64{10, 10}))
	s.Add(hist(1, 20, 10, les, []float64{20, 20}))
	s.Add(hist(2, 4, 2, les, []float64{4, 4})) // restarted
	got := s.Series()[0]
	near(t, "count", got.Count, 14)
	near(t, "sum", got.Sum, 7)
	if got.Resets != 1 {
		t.Fatalf("resets %d, want 1", got.Resets)
	}
}

// Past the bound a new series is refused; the ones kept go on.
func TestSeriesBound(t *testing.T) {
	s := NewSummarizer(2)
	if !s.Add(line(0, "a", Gauge, 1, nil)) || !s.Add(line(0, "b", Gauge, 1, nil)) {
		t.Fatal("the first two series refused")
	}
	if s.Add(line(0, "c", Gauge, 1, nil)) {
		t.Fatal("a third series kept past a bound of 2")
	}
	if !s.Add(line(1, "a", Gauge, 3, nil)) {
		t.Fatal("a kept series refused")
	}
	got := s.Series()
	if len(got) != 2 || got[0].Name != "a" || got[0].Scrapes != 2 {
		t.Fatalf("series %+v, want a (2 scrapes) and b", got)
	}
}

// Labels in any order are the same series; other label values another.
func TestSeriesIdentity(t *testing.T) {
	s := NewSummarizer(0)
	s.Add(line(0, "g", Gauge, 1, map[string]string{"a": "1", "b": "2"}))
	s.Add(line(1, "g", Gauge, 1, map[string]string{"b": "2", "a": "1"}))
	s.Add(line(1, "g", Gauge, 1, map[string]string{"a": "1", "b": "3"}))
	if s.Len() != 2 {
		t.Fatalf("%d series, want 2", s.Len())
	}
}

// Finite values whose sums overflow are left out of the summary, never
// shown as infinities that result.json could not encode.
func TestOverflowLeftOut(t *testing.T) {
	s := NewSummarizer(0)
	s.Add(line(0, "g", Gauge, math.MaxFloat64, nil))
	s.Add(line(1e-300, "g", Gauge, math.MaxFloat64, nil))
	s.Add(line(0, "c", Counter, 0, nil))
	s.Add(line(1e-300, "c", Counter, math.MaxFloat64, nil))
	for _, se := range s.Series() {
		b, err := json.Marshal(se)
		if err != nil {
			t.Fatalf("%s: %v", se.Name, err)
		}
		if se.Name == "g" && (se.Mean != nil || se.Max == nil) {
			t.Errorf("gauge %s: want no mean (it overflowed), the max kept", b)
		}
		if se.Name == "c" && (se.Rate != nil || se.Delta == nil) {
			t.Errorf("counter %s: want no rate (it overflowed), the delta kept", b)
		}
	}
}

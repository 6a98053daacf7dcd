package stats

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestLiveHistogramConcurrent(t *testing.T) {
	l := NewLiveHistogram()
	const workers, per = 8, 2000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := range per {
				l.Record(time.Duration(1+k) * time.Microsecond)
			}
			_ = w
		})
	}
	// Readers race with the recorders on purpose.
	var intervalTotal int64
	wg.Go(func() {
		for range 20 {
			intervalTotal += l.Interval().TotalCount()
			_ = l.Snapshot()
		}
	})
	wg.Wait()
	intervalTotal += l.Interval().TotalCount()

	snap := l.Snapshot()
	if snap.TotalCount() != workers*per || intervalTotal != workers*per {
		t.Fatalf("Snapshot count %d, intervals sum %d, want %d", snap.TotalCount(), intervalTotal, workers*per)
	}
	if l.Interval().TotalCount() != 0 {
		t.Error("an Interval after the last one is not empty")
	}
	// Values 1…2000 µs, each 8 times: p50 ≈ 1000 µs, p99 ≈ 1980 µs within 0.1 %.
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 1000 * time.Microsecond}, {0.99, 1980 * time.Microsecond}, {1, 2000 * time.Microsecond}} {
		got, err := HistogramPercentile(snap, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := got - tc.want; diff < -tc.want/1000 || diff > tc.want/1000 {
			t.Errorf("p%v = %v, want %v ± 0.1%%", tc.p, got, tc.want)
		}
	}
	if _, err := HistogramPercentile(snap, 99); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("percent instead of fraction: %v", err)
	}
}

func TestLiveHistogramClampsOutOfRange(t *testing.T) {
	l := NewLiveHistogram()
	l.Record(2 * time.Hour)
	l.Record(-5)
	s := l.Snapshot()
	if s.TotalCount() != 2 || !s.ValuesAreEquivalent(s.Max(), HistogramMax) || s.Min() != 0 {
		t.Errorf("count %d, min %d, max %d", s.TotalCount(), s.Min(), s.Max())
	}
}

func TestLiveHistogramRecordEach(t *testing.T) {
	l := NewLiveHistogram()
	l.RecordEach(nil)
	l.RecordEach([]time.Duration{time.Millisecond, 3 * time.Millisecond, 2 * time.Hour})
	s := l.Snapshot()
	if s.TotalCount() != 3 || !s.ValuesAreEquivalent(s.Min(), int64(time.Millisecond)) || !s.ValuesAreEquivalent(s.Max(), HistogramMax) {
		t.Errorf("count %d, min %d, max %d: want 3 values, 1 ms to the clamped maximum", s.TotalCount(), s.Min(), s.Max())
	}
}

// RecordIn records into the given shard, any k (negative or past the
// shards) wrapping onto one; concurrent recorders each with their own k
// lose nothing.
func TestLiveHistogramRecordIn(t *testing.T) {
	l := NewLiveHistogram()
	var wg sync.WaitGroup
	for _, k := range []int{0, 1, -1, 1 << 20} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				l.RecordIn(k, 2*time.Millisecond)
			}
		}()
	}
	wg.Wait()
	s := l.Snapshot()
	if s.TotalCount() != 4000 || !s.ValuesAreEquivalent(s.Max(), int64(2*time.Millisecond)) {
		t.Errorf("count %d, max %d: want 4000 values of 2 ms", s.TotalCount(), s.Max())
	}
}

func TestRecordHistogram(t *testing.T) {
	r, _ := NewLatencyRecord(6)
	for i, d := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond} {
		_ = r.Record(i, d)
	}
	_ = r.Fail(4)
	h, err := r.Histogram(1, 6)
	if err != nil {
		t.Fatal(err)
	}
	// Samples 1…3 completed; 4 failed and 5 missing are left out.
	if h.TotalCount() != 3 || !h.ValuesAreEquivalent(h.Min(), int64(2*time.Millisecond)) || !h.ValuesAreEquivalent(h.Max(), int64(4*time.Millisecond)) {
		t.Errorf("count %d min %d max %d", h.TotalCount(), h.Min(), h.Max())
	}
	for _, rng := range [][2]int{{-1, 2}, {3, 2}, {0, 7}} {
		if _, err := r.Histogram(rng[0], rng[1]); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("Histogram(%d, %d) error = %v", rng[0], rng[1], err)
		}
	}
}

func TestWriteIntervalLogReadsBack(t *testing.T) {
	r, _ := NewLatencyRecord(2000)
	for i := range 2000 {
		_ = r.Record(i, time.Duration(100+i)*time.Microsecond)
	}
	first, _ := r.Histogram(0, 1000)
	second, _ := r.Histogram(1000, 2000)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	err := WriteIntervalLog(&buf, start, "netloadgen test run", []LogInterval{
		{Start: 0, Length: time.Second, Histogram: first, Tag: "sample"},
		{Start: time.Second, Length: 1500 * time.Millisecond, Histogram: second},
	})
	if err != nil {
		t.Fatal(err)
	}
	if first.Tag() != "" || first.StartTimeMs() != 0 {
		t.Error("WriteIntervalLog modified the caller's histogram")
	}
	text := buf.String()
	for _, want := range []string{"#[Histogram log format version 1.3]", "#netloadgen test run", "#[StartTime: 1772366400", "Tag=sample,0.000000,1.000000,", "\n1.000000,1.500000,"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	rd := hdrhistogram.NewHistogramLogReader(&buf)
	var got []*hdrhistogram.Histogram
	for {
		h, err := rd.NextIntervalHistogram()
		if err == io.EOF || (err == nil && h == nil) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h)
	}
	if len(got) != 2 {
		t.Fatalf("read %d intervals, want 2", len(got))
	}
	for k, want := range []*hdrhistogram.Histogram{first, second} {
		if got[k].TotalCount() != want.TotalCount() || got[k].ValueAtQuantile(99) != want.ValueAtQuantile(99) || got[k].Max() != want.Max() {
			t.Errorf("interval %d: count %d p99 %d, want %d %d", k, got[k].TotalCount(), got[k].ValueAtQuantile(99), want.TotalCount(), want.ValueAtQuantile(99))
		}
	}
	if err := WriteIntervalLog(io.Discard, start, "", []LogInterval{{Histogram: nil}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil histogram: %v", err)
	}
}

// Quantiles reads what Snapshot would, call after call, as recording goes
// on (its histogram is reused, so each call must start from nothing).
func TestLiveHistogramQuantilesMatchSnapshot(t *testing.T) {
	l := NewLiveHistogram()
	qs := []float64{0, 0.5, 0.9, 0.99, 1}
	got := make([]time.Duration, len(qs))
	for round := range 3 {
		for k := range 1000 {
			l.Record(time.Duration(1+k*(round+1)) * time.Microsecond)
		}
		if round == 1 {
			l.Interval() // folds the shards into the total
		}
		if err := l.Quantiles(qs, got); err != nil {
			t.Fatal(err)
		}
		snap := l.Snapshot()
		for i, q := range qs {
			want, _ := HistogramPercentile(snap, q)
			if got[i] != want {
				t.Errorf("round %d: quantile %v = %v, Snapshot says %v", round, q, got[i], want)
			}
		}
	}
	if err := l.Quantiles([]float64{0.5, 0.9}, got[:1]); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("no room: %v", err)
	}
	if err := l.Quantiles([]float64{50}, got); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("percent instead of fraction: %v", err)
	}
}

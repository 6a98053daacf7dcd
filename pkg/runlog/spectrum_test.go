package runlog_test

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The percentiles are HdrHistogram's halving steps to 99.999, then the max.
func TestSpectrumPercentiles(t *testing.T) {
	ps := runlog.SpectrumPercentiles()
	if ps[0] != 0 || ps[1] != 0.5 || ps[2] != 0.75 || ps[3] != 0.875 || ps[4] != 0.9375 {
		t.Errorf("first percentiles %v", ps[:5])
	}
	if n := len(ps); ps[n-2] != 0.99999 || ps[n-1] != 1 || ps[n-3] != 1-math.Pow(2, -16) {
		t.Errorf("last percentiles %v", ps[n-3:])
	}
}

// Every row of the spectrum is the exact percentile (stats' LoadGen rule)
// of the completed samples, with the count at or below it; failed samples
// are left out and said so.
func TestSpectrumIsExact(t *testing.T) {
	var ds []time.Duration
	for i := range 1000 {
		ds = append(ds, time.Duration(i*i)*time.Microsecond)
	}
	ds = append(ds, stats.FailedLatency, stats.FailedLatency)
	l, err := stats.NewLatencies(ds)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := stats.NewLatencies(ds[:1000])
	if err != nil {
		t.Fatal(err)
	}
	rows := runlog.Spectrum(l)
	if len(rows) != len(runlog.SpectrumPercentiles()) {
		t.Fatalf("%d rows", len(rows))
	}
	var b strings.Builder
	if err := runlog.WriteSpectrum(&b, l); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, r := range rows {
		want, _ := ok.Percentile(r.P)
		if r.Latency != want {
			t.Errorf("p%v = %v, want %v", r.P, r.Latency, want)
		}
		// i² µs are distinct, so the count at or below sorted[k] is k+1.
		if k := min(int(1000*r.P), 999); r.Count != k+1 {
			t.Errorf("p%v count %d, want %d", r.P, r.Count, k+1)
		}
		if line := fmt.Sprintf("%12.3f %14.12f %12d", float64(want)/1e6, r.P, r.Count); !strings.Contains(text, line) {
			t.Errorf("text has no line %q:\n%s", line, text)
		}
	}
	for _, s := range []string{"1000 samples completed; 2 failed, not shown", "  99.000%      980.100ms", "Histogram (ms):", "inf\n"} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
	// The histogram's rows count every completed sample once.
	total := 0
	for _, line := range strings.Split(text[strings.Index(text, "Histogram (ms):"):], "\n")[1:] {
		var lo, hi float64
		var n int
		var pct float64
		if _, err := fmt.Sscanf(strings.NewReplacer("[", "", ",", "", ")", "", "]", "").Replace(line), "%f %f %d %f", &lo, &hi, &n, &pct); err == nil {
			total += n
		}
	}
	if total != 1000 {
		t.Errorf("histogram counts %d samples, want 1000:\n%s", total, text)
	}
}

// No completed sample: one line, no panic; one distinct value: one bucket.
func TestSpectrumEdgeCases(t *testing.T) {
	for _, c := range []struct {
		ds   []time.Duration
		want string
	}{
		{[]time.Duration{stats.FailedLatency}, "no sample completed (1 failed)"},
		{nil, "no sample completed (0 failed)"},
		{[]time.Duration{0, 0, 0}, "[     0.000,      0.000]          3 100.000%"},
		{[]time.Duration{5 * time.Millisecond}, "[     5.000,      5.000]          1 100.000%"},
	} {
		l, err := stats.NewLatencies(c.ds)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := runlog.WriteSpectrum(&b, l); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%v: text lacks %q:\n%s", c.ds, c.want, b.String())
		}
	}
}

// latency_spectrum.txt in a run's directory shows result.json's exact
// sample latency percentiles (a run without failures).
func TestSpectrumFileMatchesResult(t *testing.T) {
	run, res := execute(t, scenarioCase{ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server,
		latency: func(id int) time.Duration { return time.Duration(100+id%300) * 10 * time.Microsecond }})
	dir := t.TempDir()
	if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	text := readFile(t, filepath.Join(dir, runlog.SpectrumFile))
	for _, p := range []float64{0.5, 0.99} {
		v, ok := res.SampleLatency.At(p)
		if !ok {
			t.Fatalf("result has no p%v", p)
		}
		if line := fmt.Sprintf(" %8.3f%% %12.3fms\n", p*100, float64(v)/1e6); !strings.Contains(text, line) {
			t.Errorf("spectrum lacks result.json's p%v %q:\n%s", p, line, text)
		}
	}
}

// ReadSpectrum gives back the rows WriteSpectrum wrote (latencies in whole
// µs, as printed); text without a spectrum gives none; a broken row is
// ErrMalformedSpectrum.
func TestReadSpectrumRoundTrip(t *testing.T) {
	var ds []time.Duration
	for i := range 777 {
		ds = append(ds, time.Duration(i*i%5000+3)*time.Microsecond)
	}
	l, err := stats.NewLatencies(ds)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := runlog.WriteSpectrum(&b, l); err != nil {
		t.Fatal(err)
	}
	got, err := runlog.ReadSpectrum(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	want := runlog.Spectrum(l)
	if len(got) != len(want) {
		t.Fatalf("read back %d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Latency != want[i].Latency || got[i].Count != want[i].Count || math.Abs(got[i].P-want[i].P) > 1e-12 {
			t.Errorf("row %d read back %+v, want %+v", i, got[i], want[i])
		}
	}
	empty, _ := stats.NewLatencies([]time.Duration{stats.FailedLatency})
	b.Reset()
	if err := runlog.WriteSpectrum(&b, empty); err != nil {
		t.Fatal(err)
	}
	if rows, err := runlog.ReadSpectrum(strings.NewReader(b.String())); err != nil || rows != nil {
		t.Errorf("no spectrum: %v, %v", rows, err)
	}
	bad := "Detailed percentile spectrum:\n       1.000     0.500000   many\n"
	if _, err := runlog.ReadSpectrum(strings.NewReader(bad)); !errors.Is(err, runlog.ErrMalformedSpectrum) {
		t.Errorf("broken row: %v, want ErrMalformedSpectrum", err)
	}
	if _, err := runlog.ReadSpectrum(strings.NewReader("Detailed percentile spectrum:\n       1.000     0.500000   3  2.00\n")); !errors.Is(err, runlog.ErrMalformedSpectrum) {
		t.Errorf("cut short: %v, want ErrMalformedSpectrum", err)
	}
}

// A run's record is read by rank, never sorted (issue 28): the spectrum
// text of latencies read from a scan is byte for byte the one of their
// sorted copy, ties, zeros and failures included.
func TestSpectrumOfAScanIsTheSortedOnes(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	for _, n := range []int{1, 2, 1000, 50000} {
		ds := make([]time.Duration, n)
		for i := range ds {
			switch rng.IntN(20) {
			case 0:
				ds[i] = stats.FailedLatency
			case 1:
				ds[i] = 0
			default:
				ds[i] = time.Duration(float64(time.Millisecond)*rng.ExpFloat64()) / 1000 * 1000 // µs ties
			}
		}
		sorted, err := stats.NewLatencies(ds)
		if err != nil {
			t.Fatal(err)
		}
		scanned, err := stats.LatenciesOf(n, slices.Values(ds))
		if err != nil {
			t.Fatal(err)
		}
		var want, got strings.Builder
		if err := runlog.WriteSpectrum(&want, sorted); err != nil {
			t.Fatal(err)
		}
		if err := runlog.WriteSpectrum(&got, scanned); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("n = %d: the scanned spectrum differs:\n%s\nwant\n%s", n, got.String(), want.String())
		}
	}
}

// BenchmarkWriteSpectrum12M: latency_spectrum.txt of a 12M-sample record
// (600 s at 20,000 QPS) read in place (record) and, for comparison, from a
// sorted copy of it (sorted-copy, as before issue 28).
func BenchmarkWriteSpectrum12M(b *testing.B) {
	const n = 12_000_000
	rng := rand.New(rand.NewPCG(3, 4))
	r, err := stats.NewLatencyRecord(n)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := r.Record(i, time.Duration(float64(time.Millisecond)*(0.5+rng.ExpFloat64()))); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name      string
		latencies func() stats.Latencies
	}{
		{"record", r.Latencies},
		{"sorted-copy", func() stats.Latencies {
			ds := make([]time.Duration, 0, n)
			r.Each(0, n, func(_ int, d time.Duration) { ds = append(ds, d) })
			l, _ := stats.NewLatencies(ds)
			return l
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := runlog.WriteSpectrum(io.Discard, c.latencies()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

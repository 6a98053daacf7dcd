package runlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
)

// SpectrumRow is one line of a latency percentile spectrum: the exact
// latency at percentile P (sorted[floor(n·P)], LoadGen's rule) and Count,
// the samples at or below it.
type SpectrumRow struct {
	P       float64
	Latency time.Duration
	Count   int
}

// SpectrumPercentiles are the spectrum's percentiles, HdrHistogram's
// halving steps (0, 50, 75, 87.5, 93.75, …) to 99.999, then the maximum.
func SpectrumPercentiles() []float64 {
	ps := []float64{0}
	for k := 1; 1-math.Pow(2, -float64(k)) < 0.99999; k++ {
		ps = append(ps, 1-math.Pow(2, -float64(k)))
	}
	return append(ps, 0.99999, 1)
}

// summaryPercentiles are the short list above the spectrum (wrk2's
// "Latency Distribution").
var summaryPercentiles = []float64{0.50, 0.75, 0.90, 0.99, 0.999, 0.9999, 0.99999, 1}

// histogramBuckets is how many rows the short histogram has.
const histogramBuckets = 10

// Spectrum returns the percentile spectrum of the completed samples of l;
// nil when none completed.
func Spectrum(l stats.Latencies) []SpectrumRow {
	ok := l.Completed()
	if ok.Len() == 0 {
		return nil
	}
	return spectrumAt(ok, SpectrumPercentiles())
}

// spectrumAt selects all the percentiles ps (in [0, 1]) of ok together,
// and their counts: a run's record is scanned a few times for all of
// them, never sorted.
func spectrumAt(ok stats.Latencies, ps []float64) []SpectrumRow {
	vs, err := ok.Percentiles(ps)
	if err != nil {
		return nil
	}
	counts := ok.CountsAtMost(vs)
	rows := make([]SpectrumRow, len(ps))
	for i, p := range ps {
		rows[i] = SpectrumRow{P: p, Latency: vs[i], Count: counts[i]}
	}
	return rows
}

// WriteSpectrum writes the latency percentile spectrum of the completed
// samples of l as text, as wrk2 --latency does: a short percentile list,
// HdrHistogram's detailed spectrum (value in ms, percentile, count at or
// below, 1/(1−p)) and a short histogram. The values are exact, not
// histogram buckets.
func WriteSpectrum(w io.Writer, l stats.Latencies) error {
	ok := l.Completed()
	var b strings.Builder
	if ok.Len() == 0 {
		fmt.Fprintf(&b, "Latency spectrum: no sample completed (%d failed)\n", l.Failed())
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "Latency distribution (exact, %d samples completed", ok.Len())
	if l.Failed() > 0 {
		fmt.Fprintf(&b, "; %d failed, not shown", l.Failed())
	}
	b.WriteString("):\n")
	for _, r := range spectrumAt(ok, summaryPercentiles) {
		fmt.Fprintf(&b, " %8.3f%% %12.3fms\n", r.P*100, ms(r.Latency))
	}
	b.WriteString("\n" + spectrumHeader + "\n")
	fmt.Fprintf(&b, "%12s %14s %12s %16s\n\n", "Value(ms)", "Percentile", "TotalCount", "1/(1-Percentile)")
	for _, r := range Spectrum(l) {
		inv := "inf"
		if r.P < 1 {
			inv = fmt.Sprintf("%.2f", 1/(1-r.P))
		}
		// The percentile to 12 decimals, as HdrHistogram prints it.
		fmt.Fprintf(&b, "%12.3f %14.12f %12d %16s\n", ms(r.Latency), r.P, r.Count, inv)
	}
	sum, _ := ok.Summary()
	fmt.Fprintf(&b, "#[Mean    = %12.3f, Max         = %12.3f]\n", ms(sum.Mean), ms(sum.Max))
	fmt.Fprintf(&b, "#[Min     = %12.3f, Total count = %12d]\n", ms(sum.Min), sum.Count)
	b.WriteString("\nHistogram (ms):\n")
	writeHistogram(&b, ok, sum)
	_, err := io.WriteString(w, b.String())
	return err
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// writeHistogram writes a short histogram of ok (completed, non-empty, sum
// its summary) in histogramBuckets rows of geometrically growing width from
// its minimum to its maximum, so a long tail does not squeeze the body into
// one row.
func writeHistogram(b *strings.Builder, ok stats.Latencies, sum stats.Summary) {
	edges := histogramEdges(sum.Min, sum.Max)
	// below[i]: the latencies under edges[i], all counted in one go.
	below := make([]time.Duration, len(edges))
	for i, e := range edges {
		below[i] = e - 1
	}
	under := ok.CountsAtMost(below)
	counts := make([]int, len(edges)-1)
	most := 0
	for i := range counts {
		to := under[i+1]
		if i == len(counts)-1 {
			to = ok.Len() // the last bucket holds the maximum
		}
		counts[i] = to - under[i]
		most = max(most, counts[i])
	}
	for i, c := range counts {
		bar := strings.Repeat("#", (c*40+most-1)/most)
		fmt.Fprintf(b, "  [%10.3f, %10.3f%s %10d %7.3f%%  %s\n", ms(edges[i]), ms(edges[i+1]), closing(i == len(counts)-1),
			c, 100*float64(c)/float64(ok.Len()), bar)
	}
}

func closing(last bool) string {
	if last {
		return "]"
	}
	return ")"
}

// histogramEdges are the bucket edges from lo to hi: geometric from a floor
// of 1 µs (a zero latency has no logarithm), one bucket when lo == hi.
func histogramEdges(lo, hi time.Duration) []time.Duration {
	if hi <= lo {
		return []time.Duration{lo, hi}
	}
	base := max(lo, time.Microsecond)
	if hi <= base {
		return []time.Duration{lo, hi}
	}
	ratio := math.Pow(float64(hi)/float64(base), 1/float64(histogramBuckets))
	edges := []time.Duration{lo}
	for k := 1; k < histogramBuckets; k++ {
		e := time.Duration(float64(base) * math.Pow(ratio, float64(k)))
		if e > edges[len(edges)-1] {
			edges = append(edges, e)
		}
	}
	return append(edges, hi)
}

// spectrumHeader opens the detailed spectrum's rows in WriteSpectrum's text.
const spectrumHeader = "Detailed percentile spectrum:"

// ReadSpectrum reads the detailed spectrum's rows back from WriteSpectrum's
// text (latency_spectrum.txt), for a report that reads runs from disk. The
// values are as printed: latencies in whole microseconds, percentiles to
// 12 decimals; nil when the text has no
// spectrum (no sample completed).
func ReadSpectrum(r io.Reader) ([]SpectrumRow, error) {
	sc := bufio.NewScanner(r)
	in := false
	var rows []SpectrumRow
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == spectrumHeader:
			in = true
			continue
		case !in || line == "" || strings.HasPrefix(line, "Value"):
			continue
		case strings.HasPrefix(line, "#"):
			return rows, nil
		}
		var ms, p float64
		var count int
		if _, err := fmt.Sscanf(line, "%f %f %d", &ms, &p, &count); err != nil {
			return nil, fmt.Errorf("%w: spectrum row %q: %w", ErrMalformedSpectrum, line, err)
		}
		rows = append(rows, SpectrumRow{P: p, Latency: time.Duration(math.Round(ms*1e3)) * time.Microsecond, Count: count})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if in {
		return nil, fmt.Errorf("%w: the spectrum has no closing summary", ErrMalformedSpectrum)
	}
	return nil, nil
}

// ErrMalformedSpectrum: latency_spectrum.txt is not WriteSpectrum's text.
var ErrMalformedSpectrum = errors.New("runlog: malformed latency_spectrum.txt")

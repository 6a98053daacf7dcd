package report

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// Spectrum is a run's latency by percentile, HdrHistogram's percentile
// distribution: the completed samples of every interval of latency.hlog.
type Spectrum struct {
	Count  int64
	MaxNs  int64
	Points []SpectrumPoint
	// Intervals are the log's intervals as a time series of the completed
	// samples by the second they were issued in (the issue and failure
	// counts and the lateness are not in the log).
	Intervals *runlog.Timeseries
}

// SpectrumPoint is the latency at percentile P (a fraction).
type SpectrumPoint struct {
	P  float64
	Ns int64
}

// spectrumStep is the spacing of the points in decades of 1/(1−p): 20 a
// decade draw a smooth curve in a few hundred points for any run.
const spectrumStep = 0.05

// readSpectrum merges the intervals of an HdrHistogram log and samples the
// result on a grid even in log10(1/(1−p)), up to the last percentile the
// count resolves (1−1/n), where it puts the maximum.
func readSpectrum(b []byte) (*Spectrum, error) {
	lr := hdrhistogram.NewHistogramLogReader(bytes.NewReader(b))
	var all *hdrhistogram.Histogram
	ts := &runlog.Timeseries{}
	var t0 int64
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("not an HdrHistogram log: %w", err)
		}
		if h == nil {
			break
		}
		if all == nil {
			t0 = h.StartTimeMs()
			ts.IntervalNs = max(h.EndTimeMs()-h.StartTimeMs(), 1) * 1e6
		}
		// The last interval is as long as what is left of the run: a rate
		// over a few ms would plunge, so a short one is left out.
		if (h.EndTimeMs()-h.StartTimeMs())*1e6 >= ts.IntervalNs/2 {
			sec := runlog.Second{Second: int((h.StartTimeMs() - t0) * 1e6 / ts.IntervalNs), Completed: h.TotalCount()}
			if h.TotalCount() > 0 {
				p50, p99 := h.ValueAtQuantile(50), h.ValueAtQuantile(99)
				sec.P50Ns, sec.P99Ns = &p50, &p99
			}
			ts.Seconds = append(ts.Seconds, sec)
		}
		if all == nil {
			all = h
			continue
		}
		if dropped := all.Merge(h); dropped > 0 {
			return nil, fmt.Errorf("intervals of different ranges (%d values dropped merging them)", dropped)
		}
	}
	if all == nil {
		return nil, errors.New("not an HdrHistogram log: no histogram intervals")
	}
	s := &Spectrum{Count: all.TotalCount(), MaxNs: all.Max()}
	if len(ts.Seconds) > 1 && ts.Check() == nil {
		s.Intervals = ts
	}
	if s.Count == 0 {
		return s, nil
	}
	top := math.Log10(float64(s.Count))
	for i := 0; float64(i)*spectrumStep < top; i++ {
		p := 1 - math.Pow(10, -float64(i)*spectrumStep)
		s.Points = append(s.Points, SpectrumPoint{P: p, Ns: all.ValueAtQuantile(p * 100)})
	}
	s.Points = append(s.Points, SpectrumPoint{P: 1 - 1/float64(s.Count), Ns: s.MaxNs})
	return s, nil
}

// spectrumX is the spectrum's x coordinate of percentile p: log10(1/(1−p)),
// 0 at p = 0, 2 at p99, 3 at p99.9.
func spectrumX(p float64) float64 {
	if p >= 1 {
		return math.Inf(1)
	}
	return -math.Log10(1 - p)
}

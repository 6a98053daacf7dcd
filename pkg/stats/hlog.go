package stats

import (
	"fmt"
	"io"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// LogInterval is one line of an HdrHistogram interval log: the latencies of
// the samples of one time slice of the run.
type LogInterval struct {
	Start     time.Duration // offset from the run's start
	Length    time.Duration
	Histogram *hdrhistogram.Histogram
	Tag       string // optional; no commas, spaces or line breaks
}

// WriteIntervalLog writes an HdrHistogram interval log (.hlog, format 1.3),
// the file HdrHistogram's HistogramLogProcessor and HistogramLogAnalyzer plot,
// with hdrhistogram-go's log writer. Times are relative to start (the log's
// StartTime and BaseTime); values are nanoseconds. The histograms are not
// modified.
func WriteIntervalLog(w io.Writer, start time.Time, comment string, intervals []LogInterval) error {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	startMs := start.UnixMilli()
	lw.SetBaseTime(startMs)
	if err := lw.OutputLogFormatVersion(); err != nil {
		return fmt.Errorf("write hlog header: %w", err)
	}
	if comment != "" {
		if err := lw.OutputComment(comment); err != nil {
			return fmt.Errorf("write hlog header: %w", err)
		}
	}
	if err := lw.OutputStartTime(startMs); err != nil {
		return fmt.Errorf("write hlog header: %w", err)
	}
	if err := lw.OutputBaseTime(startMs); err != nil {
		return fmt.Errorf("write hlog header: %w", err)
	}
	if err := lw.OutputLegend(); err != nil {
		return fmt.Errorf("write hlog header: %w", err)
	}
	for i, iv := range intervals {
		if iv.Histogram == nil || iv.Start < 0 || iv.Length < 0 {
			return fmt.Errorf("%w: hlog interval %d", ErrInvalidArgument, i)
		}
		// The writer takes times and tag from the histogram itself; stamp a
		// clone so the caller's histogram is left as it was.
		h := iv.Histogram.Clone()
		h.SetStartTimeMs(startMs + iv.Start.Milliseconds())
		h.SetEndTimeMs(startMs + (iv.Start + iv.Length).Milliseconds())
		h.SetTag(iv.Tag)
		if err := lw.OutputIntervalHistogram(h); err != nil {
			return fmt.Errorf("write hlog interval %d: %w", i, err)
		}
	}
	return nil
}

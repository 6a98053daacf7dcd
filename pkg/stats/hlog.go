package stats

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
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
// the file HdrHistogram's HistogramLogProcessor and HistogramLogAnalyzer plot.
// Times are relative to start (the log's StartTime and BaseTime); values are
// nanoseconds. The histograms are not modified.
//
// The header lines come from hdrhistogram-go's log writer; the interval
// lines from hlogEncoder, which writes what that writer would (the same V2
// payload, compressed) without its cost per interval: it compresses each
// histogram with a new zlib writer at the best compression, ~1 MB of
// state to allocate and clear, and stamps a copy of the histogram first.
// That was 7% of the CPU of a 20-second run at 100 QPS (bench/RESULTS.md).
func WriteIntervalLog(w io.Writer, start time.Time, comment string, intervals []LogInterval) error {
	for i, iv := range intervals {
		if err := checkInterval(iv); err != nil {
			return fmt.Errorf("%w %d", err, i)
		}
	}
	lw, err := NewIntervalLogWriter(w, start, comment)
	if err != nil {
		return err
	}
	for _, iv := range intervals {
		if err := lw.Write(iv); err != nil {
			return err
		}
	}
	return nil
}

func checkInterval(iv LogInterval) error {
	if iv.Histogram == nil || iv.Start < 0 || iv.Length < 0 || strings.ContainsAny(iv.Tag, ", \r\n") {
		return fmt.Errorf("%w: hlog interval", ErrInvalidArgument)
	}
	return nil
}

// IntervalLogWriter writes an interval log one interval at a time, as
// WriteIntervalLog does all at once: a long run's intervals need not all
// be held (each histogram is about 190 KiB).
type IntervalLogWriter struct {
	w   io.Writer
	enc hlogEncoder
	n   int
}

// NewIntervalLogWriter writes the log's header lines (see WriteIntervalLog).
func NewIntervalLogWriter(w io.Writer, start time.Time, comment string) (*IntervalLogWriter, error) {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	startMs := start.UnixMilli()
	lw.SetBaseTime(startMs)
	if err := lw.OutputLogFormatVersion(); err != nil {
		return nil, fmt.Errorf("write hlog header: %w", err)
	}
	if comment != "" {
		if err := lw.OutputComment(comment); err != nil {
			return nil, fmt.Errorf("write hlog header: %w", err)
		}
	}
	if err := lw.OutputStartTime(startMs); err != nil {
		return nil, fmt.Errorf("write hlog header: %w", err)
	}
	if err := lw.OutputBaseTime(startMs); err != nil {
		return nil, fmt.Errorf("write hlog header: %w", err)
	}
	if err := lw.OutputLegend(); err != nil {
		return nil, fmt.Errorf("write hlog header: %w", err)
	}
	return &IntervalLogWriter{w: w}, nil
}

// Write writes the next interval's line. The histogram is not modified.
func (l *IntervalLogWriter) Write(iv LogInterval) error {
	if err := checkInterval(iv); err != nil {
		return fmt.Errorf("%w %d", err, l.n)
	}
	if err := l.enc.writeInterval(l.w, iv); err != nil {
		return fmt.Errorf("write hlog interval %d: %w", l.n, err)
	}
	l.n++
	return nil
}

// The V2 encoding's cookies: hdrhistogram-go's bases with the word size of
// the counts (0x10, 8 bytes), as its encoder and Java's writer put them.
const (
	hlogPayloadCookie    = hdrhistogram.V2EncodingCookieBase | 0x10
	hlogCompressedCookie = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
)

// hlogEncoder writes interval lines, its buffers and compressor reused from
// one interval to the next.
type hlogEncoder struct {
	payload, compressed, line bytes.Buffer
	zw                        *zlib.Writer
}

// writeInterval writes iv as "[Tag=T,]start,length,max_ms,base64" with
// hdrhistogram-go's number formats, so a log reads the same whichever wrote
// it.
func (e *hlogEncoder) writeInterval(w io.Writer, iv LogInterval) error {
	h := iv.Histogram
	if err := e.encode(h); err != nil {
		return err
	}
	e.line.Reset()
	if iv.Tag != "" {
		fmt.Fprintf(&e.line, "Tag=%s,", iv.Tag)
	}
	startS := float64(iv.Start.Milliseconds()) / 1000
	endS := float64((iv.Start + iv.Length).Milliseconds()) / 1000
	fmt.Fprintf(&e.line, "%f,%f,%f,", startS, endS-startS, float64(h.Max())/hdrhistogram.MsToNsRatio)
	enc := base64.NewEncoder(base64.StdEncoding, &e.line)
	_, _ = enc.Write(e.compressed.Bytes()) // a bytes.Buffer does not fail
	_ = enc.Close()
	e.line.WriteByte('\n')
	_, err := w.Write(e.line.Bytes())
	return err
}

// encode leaves h's V2 compressed encoding in e.compressed: a cookie and a
// length, then zlib of a 40-byte header and the counts as ZigZag LEB128
// (at most 9 bytes each), a run of zeros as its negated length, up to the
// bucket of the largest value.
func (e *hlogEncoder) encode(h *hdrhistogram.Histogram) error {
	counts := h.Export().Counts
	limit := 1 // an empty histogram encodes one zero count
	for i := len(counts) - 1; i >= 0; i-- {
		if counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	e.payload.Reset()
	var hdr [40]byte
	e.payload.Write(hdr[:]) // filled in below, once the counts' length is known
	for i := 0; i < limit; {
		c := counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		putZigZag(&e.payload, c)
	}
	p := e.payload.Bytes()
	be := binary.BigEndian
	be.PutUint32(p[0:], uint32(hlogPayloadCookie))
	be.PutUint32(p[4:], uint32(len(p)-40))
	be.PutUint32(p[8:], 0) // normalizing index offset
	be.PutUint32(p[12:], uint32(h.SignificantFigures()))
	be.PutUint64(p[16:], uint64(h.LowestTrackableValue()))
	be.PutUint64(p[24:], uint64(h.HighestTrackableValue()))
	be.PutUint64(p[32:], math.Float64bits(1)) // integer to double ratio
	e.compressed.Reset()
	var pre [8]byte
	e.compressed.Write(pre[:])
	if e.zw == nil {
		// Any zlib level reads back; the fastest resets without clearing
		// its tables, and a payload of a few hundred bytes gains little
		// from the best.
		e.zw, _ = zlib.NewWriterLevel(&e.compressed, zlib.BestSpeed) // a valid level cannot fail
	} else {
		e.zw.Reset(&e.compressed)
	}
	if _, err := e.zw.Write(p); err != nil {
		return err
	}
	if err := e.zw.Close(); err != nil {
		return err
	}
	c := e.compressed.Bytes()
	be.PutUint32(c[0:], uint32(hlogCompressedCookie))
	be.PutUint32(c[4:], uint32(len(c)-8))
	return nil
}

// putZigZag appends v ZigZag-encoded as HdrHistogram's LEB128-64b9B: seven
// bits a byte, low first, with a continuation bit, and all eight bits in a
// ninth byte.
func putZigZag(b *bytes.Buffer, v int64) {
	u := uint64(v<<1) ^ uint64(v>>63)
	for range 8 {
		if u < 0x80 {
			b.WriteByte(byte(u))
			return
		}
		b.WriteByte(byte(u&0x7f | 0x80))
		u >>= 7
	}
	b.WriteByte(byte(u))
}

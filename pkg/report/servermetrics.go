package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// The bounds of what the report keeps of server_metrics.jsonl, which a long
// run with many series makes large: the file is read a line at a time, only
// the plotted metrics are kept, at most maxTracksPerKind series of each
// kind, each downsampled to maxBins points (about the plot's width).
const (
	maxTracksPerKind = 6
	maxBins          = 600
	// maxMetricsLine bounds one line: a histogram's buckets fit many
	// times over; a longer line is malformed.
	maxMetricsLine = 1 << 20
	// maxMetricsBytes bounds what is read of the file: past it the rest
	// is left out, with a note (an endless or runaway file must not hold
	// the report; a run's 5,000 series a second for an hour is ~3 GiB,
	// and the plotted metrics' first 4 GiB draw a long run well enough).
	maxMetricsBytes = 4 << 30
	// maxSeconds is the latest time a point is drawn at: a sample's "t"
	// past it (a year) is no run's.
	maxSeconds = 365 * 24 * 3600
	// minWidth is the narrowest bin, in s.
	minWidth = 1e-3
	// maxDropped bounds the series remembered only to be counted as not
	// drawn.
	maxDropped = 4096
)

// atLeast is n, or "at least n" when counting stopped there.
func atLeast(n int, capped bool) string {
	if capped {
		return fmt.Sprintf("at least %d", n)
	}
	return strconv.Itoa(n)
}

// plotted is what the report draws of a known metric's kind, and how.
var plotted = []struct {
	Kind serverview.Kind
	// Types are the series types drawn: a gauge's value, a counter's rate
	// between scrapes, a histogram's mean over the interval.
	Types []string
}{
	{serverview.KindQueue, []string{serverview.Gauge, serverview.Untyped}},
	{serverview.KindBatch, []string{serverview.Gauge, serverview.Untyped, serverview.Histogram}},
	{serverview.KindKVCache, []string{serverview.Gauge, serverview.Untyped}},
	{serverview.KindGPUUtil, []string{serverview.Gauge, serverview.Untyped}},
	{serverview.KindQueueTime, []string{serverview.Histogram}},
	{serverview.KindRequests, []string{serverview.Counter}},
}

// metricLine is one line of server_metrics.jsonl: a gauge's, counter's or
// untyped series' value, or a histogram's count and sum (its buckets are
// not drawn, and not decoded).
type metricLine struct {
	T        *float64          `json:"t"`
	Endpoint string            `json:"endpoint"`
	Name     string            `json:"name"`
	Labels   map[string]string `json:"labels"`
	Type     string            `json:"type"`
	Value    *promFloat        `json:"value"`
	Count    *promFloat        `json:"count"`
	Sum      *promFloat        `json:"sum"`
}

// promFloat is a sample's value: a JSON number, or Prometheus's NaN, +Inf
// and -Inf as strings (JSON has no such numbers).
type promFloat float64

func (p *promFloat) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*p = promFloat(math.NaN())
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("value %q is not a number", s)
		}
		*p = promFloat(v)
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("value %s is not a number", b)
	}
	*p = promFloat(v)
	return nil
}

func (p *promFloat) get() float64 {
	if p == nil {
		return math.NaN()
	}
	return float64(*p)
}

// serverSeries are the server's metrics as the report draws them: the
// known metrics' series of the plotted kinds, each downsampled.
type serverSeries struct {
	Tracks []*track
	// Dropped counts the series of a kind past maxTracksPerKind, not
	// drawn; past maxDropped series the count stops (DroppedCapped).
	Dropped       map[serverview.Kind]int
	DroppedCapped bool
	// Lines is how many lines were read; Truncated: the file went on past
	// maxMetricsBytes, not read.
	Lines     int64
	Truncated bool
}

// track is one series over the run: a gauge's values, a counter's rate
// between scrapes or a histogram's mean over each interval (in ms for a
// time), downsampled to at most maxBins points.
type track struct {
	Name, Endpoint, Type string
	Labels               map[string]string
	Kind                 serverview.Kind
	bins                 downsampler
	// The previous scrape's raw figures, for a rate or an interval's mean.
	prevT, prevV, prevSum float64
	havePrev              bool
}

// points are the track's points: the mean of each bin's values at the mean
// of its times, and the bin's maximum and count for the tooltip.
func (t *track) points() []binPoint { return t.bins.points() }

func (r *Run) loadServerMetrics(src Source) error {
	if r.Result == nil {
		return nil
	}
	f, err := src.Open(serverview.MetricsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a run before issue 30, or with --no-server-metrics: nothing to say
	}
	if err != nil {
		return fileErr(serverview.MetricsFile, err)
	}
	defer f.Close()
	width := float64(r.Result.DurationNs) / 1e9 / maxBins
	ss, err := readServerMetrics(f, width, maxMetricsBytes)
	if err != nil {
		return fileErr(serverview.MetricsFile, err)
	}
	if len(ss.Tracks) > 0 {
		r.serverSeries = ss
	}
	if ss.Truncated {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: only its first %d lines (%d MiB) read", serverview.MetricsFile, ss.Lines, maxMetricsBytes>>20))
	}
	for _, p := range plotted {
		if n := ss.Dropped[p.Kind]; n > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %s more series of %s metrics not drawn (at most %d a kind)", serverview.MetricsFile, atLeast(n, ss.DroppedCapped), p.Kind, maxTracksPerKind))
		}
	}
	return nil
}

// readServerMetrics reads server_metrics.jsonl a line at a time, keeping
// the plotted series. A line that is not a sample is an error naming it,
// but for a last line cut short (a run that ended while writing), which is
// left out. A line that names no plotted metric is not decoded: the file
// holds every series the run scraped, the report draws a few.
func readServerMetrics(rd io.Reader, width float64, limit int64) (*serverSeries, error) {
	ss := &serverSeries{Dropped: map[serverview.Kind]int{}}
	tracks := map[string]*track{}
	perKind := map[serverview.Kind]int{}
	lr := &io.LimitedReader{R: rd, N: limit}
	br := bufio.NewReaderSize(lr, 64<<10)
	for {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			ss.Truncated = lr.N <= 0 && moreThan(rd)
			return ss, nil
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", ss.Lines+1, err)
		}
		if lr.N <= 0 && line.last {
			ss.Truncated = moreThan(rd)
			if ss.Truncated {
				return ss, nil // the limit cut this line
			}
		}
		ss.Lines++
		if len(bytes.TrimSpace(line.b)) == 0 || !mentionsPlotted(line.b) {
			continue
		}
		var m metricLine
		if err := json.Unmarshal(line.b, &m); err != nil || m.T == nil || m.Name == "" {
			if line.last {
				return ss, nil // cut short
			}
			if err == nil {
				err = errors.New(`a sample needs "t" and "name"`)
			}
			return nil, fmt.Errorf("line %d: %w", ss.Lines, err)
		}
		kind, ok := plottedKind(m.Name, m.Type)
		if !ok {
			continue
		}
		key := trackKey(m)
		t := tracks[key]
		if t == nil {
			if perKind[kind] >= maxTracksPerKind {
				if len(tracks) < maxTracksPerKind*len(plotted)+maxDropped {
					ss.Dropped[kind]++
					tracks[key] = &track{} // counted once; its lines are skipped
				} else {
					ss.DroppedCapped = true
				}
				continue
			}
			perKind[kind]++
			t = &track{Name: m.Name, Endpoint: m.Endpoint, Type: m.Type, Labels: m.Labels, Kind: kind, bins: downsampler{width: width}}
			tracks[key] = t
			ss.Tracks = append(ss.Tracks, t)
		}
		if t.Name != "" {
			t.add(m)
		}
	}
}

type rawLine struct {
	b    []byte
	last bool // no newline after it: the file's end
}

// moreThan: r has a byte left.
func moreThan(r io.Reader) bool {
	var b [1]byte
	n, _ := io.ReadFull(r, b[:])
	return n > 0
}

// plottedNames are the plotted known metrics' names, quoted as a line
// holds them.
var plottedNames = func() [][]byte {
	var out [][]byte
	for _, k := range serverview.KnownMetrics {
		for _, p := range plotted {
			if p.Kind == k.Kind {
				q, _ := json.Marshal(k.Name)
				out = append(out, q)
			}
		}
	}
	return out
}()

// plottedSet is plottedNames without their quotes.
var plottedSet = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range plottedNames {
		m[string(n[1:len(n)-1])] = true
	}
	return m
}()

// nameKey is how the scraper (encoding/json) writes a line's name.
var nameKey = []byte(`"name":"`)

// mentionsPlotted: line may be a plotted metric's sample; a line that is
// not is skipped undecoded. A line as the scraper writes it has its name
// as "name":"..." (a label called name too): it may be when one of those
// is a plotted name. A line written otherwise may be when it holds one's
// name in quotes anywhere.
func mentionsPlotted(line []byte) bool {
	rest, found := line, false
	for {
		i := bytes.Index(rest, nameKey)
		if i < 0 {
			break
		}
		found = true
		rest = rest[i+len(nameKey):]
		if j := bytes.IndexByte(rest, '"'); j >= 0 && plottedSet[string(rest[:j])] {
			return true
		}
	}
	if found {
		return false
	}
	for _, n := range plottedNames {
		if bytes.Contains(line, n) {
			return true
		}
	}
	return false
}

// readLine reads one line of at most maxMetricsLine bytes. A line that
// fits the reader's buffer is returned in it, valid until the next read.
func readLine(br *bufio.Reader) (rawLine, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if err == nil && b == nil {
			return rawLine{b: chunk}, nil
		}
		if len(b)+len(chunk) > maxMetricsLine {
			return rawLine{}, fmt.Errorf("longer than %d bytes", maxMetricsLine)
		}
		b = append(b, chunk...)
		switch {
		case err == nil:
			return rawLine{b: b}, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(b) > 0:
			return rawLine{b: b, last: true}, nil
		default:
			return rawLine{}, err
		}
	}
}

// plottedKind is the kind of a known metric the report draws with this
// type.
func plottedKind(name, typ string) (serverview.Kind, bool) {
	k, ok := serverview.LookUp(name)
	if !ok {
		return "", false
	}
	for _, p := range plotted {
		if p.Kind == k.Kind && slices.Contains(p.Types, typ) {
			return k.Kind, true
		}
	}
	return "", false
}

func trackKey(m metricLine) string {
	keys := make([]string, 0, len(m.Labels))
	for k := range m.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(m.Endpoint + "\x00" + m.Name + "\x00" + m.Type)
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + m.Labels[k])
	}
	return b.String()
}

// add takes one scrape of the track's series: a gauge's value as it is; a
// counter's rate since the previous scrape (none across a reset or a step
// back in time); a histogram's mean over the interval, from the deltas of
// its sum and count (none in an interval without observations).
func (t *track) add(m metricLine) {
	at := *m.T
	switch t.Type {
	case serverview.Counter:
		v := m.Value.get()
		if t.havePrev && at > t.prevT && v >= t.prevV {
			t.bins.add(t.prevT+(at-t.prevT)/2, (v-t.prevV)/(at-t.prevT))
		}
		t.prevT, t.prevV, t.havePrev = at, v, finite(v)
	case serverview.Histogram:
		c, s := m.Count.get(), m.Sum.get()
		if t.havePrev && at > t.prevT && c > t.prevV {
			mean := (s - t.prevSum) / (c - t.prevV)
			if t.Kind == serverview.KindQueueTime {
				mean *= unitMs(t.Name)
			}
			t.bins.add(t.prevT+(at-t.prevT)/2, mean)
		}
		t.prevT, t.prevV, t.prevSum, t.havePrev = at, c, s, finite(c) && finite(s)
	default:
		t.bins.add(at, m.Value.get())
	}
}

// unitMs is the ms in one unit of a time metric, by its name's suffix.
func unitMs(name string) float64 {
	switch {
	case strings.HasSuffix(name, "_us"):
		return 1e-3
	case strings.HasSuffix(name, "_ms"):
		return 1
	}
	return 1e3 // Prometheus's convention: seconds
}

// downsampler keeps at most maxBins bins of equal width from 0; a point
// past the last bin doubles the width, merging the bins in pairs, so a run
// of any length keeps at most maxBins points, each the mean of its bin.
type downsampler struct {
	// width is a bin's in s, at least minWidth.
	width float64
	bins  []bin
}

type bin struct {
	n          int64
	sumT, sumV float64
	maxV       float64
}

type binPoint struct {
	T, V, Max float64
	N         int64
}

func (d *downsampler) add(t, v float64) {
	if !finite(t) || !finite(v) || t < 0 || t > maxSeconds {
		return // before the run's start (a scrape at the probe), or no run's time
	}
	if !(d.width >= minWidth) {
		d.width = minWidth
	}
	for t/d.width >= maxBins { // compared as floats: t/width may pass any int
		d.merge()
	}
	i := int(t / d.width)
	if i >= len(d.bins) {
		d.bins = append(d.bins, make([]bin, i+1-len(d.bins))...)
	}
	b := &d.bins[i]
	if b.n == 0 || v > b.maxV {
		b.maxV = v
	}
	b.n++
	b.sumT += t
	b.sumV += v
}

// merge halves the bins: bin i of the new width holds bins 2i and 2i+1.
func (d *downsampler) merge() {
	merged := make([]bin, (len(d.bins)+1)/2)
	for i, b := range d.bins {
		m := &merged[i/2]
		if b.n == 0 {
			continue
		}
		if m.n == 0 || b.maxV > m.maxV {
			m.maxV = b.maxV
		}
		m.n += b.n
		m.sumT += b.sumT
		m.sumV += b.sumV
	}
	d.bins, d.width = merged, d.width*2
}

func (d *downsampler) points() []binPoint {
	var out []binPoint
	for _, b := range d.bins {
		if b.n > 0 {
			out = append(out, binPoint{T: b.sumT / float64(b.n), V: b.sumV / float64(b.n), Max: b.maxV, N: b.n})
		}
	}
	return out
}

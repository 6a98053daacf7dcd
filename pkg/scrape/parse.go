package scrape

import (
	"fmt"
	"io"
	"math"
	"mime"
	"runtime"
	"sort"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// accept asks for the text format only. The library reads OpenMetrics with
// its text parser, where a counter's `_total` samples come out untyped
// (no delta, no rate), and Python's prometheus_client (vLLM, SGLang,
// KServe's model server) answers OpenMetrics whenever Accept names it,
// whatever its q. A server that answers OpenMetrics anyway is still read
// (format); the protobuf format is never asked for.
const accept = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// format is the exposition format of a response's Content-Type, as the
// library names it: its own choice (text or delimited protobuf), else
// OpenMetrics 1.0 for an OpenMetrics answer, else the text format, what
// a server that sets no Content-Type means.
func format(contentType string) expfmt.Format {
	h := map[string][]string{"Content-Type": {contentType}}
	if f := expfmt.ResponseFormat(h); f != expfmt.FmtUnknown {
		return f
	}
	if mt, params, err := mime.ParseMediaType(contentType); err == nil && mt == expfmt.OpenMetricsType {
		if params["version"] == expfmt.OpenMetricsVersion_2_0_0 {
			// The library refuses it (malformed, counted).
			return expfmt.FmtOpenMetrics_2_0_0
		}
		return expfmt.FmtOpenMetrics_1_0_0
	}
	return expfmt.FmtText
}

// decode reads every metric family of r in format f with the
// Prometheus library's decoder.
func decode(r io.Reader, f expfmt.Format) ([]*dto.MetricFamily, error) {
	d := expfmt.NewDecoder(r, f)
	var fams []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		err := d.Decode(mf)
		if err == io.EOF {
			return fams, nil
		}
		if err != nil {
			return fams, err
		}
		fams = append(fams, mf)
	}
}

// lines are the families' series as server_metrics.jsonl's lines, every
// one stamped t and endpoint. A summary becomes its quantiles (a
// "quantile" label) and its _sum and _count, each typed summary; a gauge
// histogram is a histogram. Values that JSON cannot carry (NaN, ±Inf:
// a gauge of nothing measured yet) are left out; their count is returned.
//
// skip, when set, is asked first of each series but a summary's (whose
// lines are named apart): true leaves it out unbuilt, so that series past
// the bound cost no more than their parse.
func lines(fams []*dto.MetricFamily, t float64, endpoint string, skip func(name string, m *dto.Metric) bool, each func(*serverview.Line)) (nonFinite int) {
	sort.Slice(fams, func(i, j int) bool { return fams[i].GetName() < fams[j].GetName() })
	n := 0
	for _, mf := range fams {
		for _, m := range mf.GetMetric() {
			if n++; n%yieldEvery == 0 {
				runtime.Gosched() // as boundedReader's reads do
			}
			if skip != nil && mf.GetType() != dto.MetricType_SUMMARY && skip(mf.GetName(), m) {
				continue
			}
			base := serverview.Line{T: t, Endpoint: endpoint, Name: mf.GetName(), Labels: labels(m)}
			for _, l := range values(mf, m, base) {
				if !finite(l) {
					nonFinite++
					continue
				}
				each(l)
			}
		}
	}
	return nonFinite
}

func labels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

// values are one metric's lines.
func values(mf *dto.MetricFamily, m *dto.Metric, base serverview.Line) []*serverview.Line {
	one := func(typ string, v float64) []*serverview.Line {
		l := base
		l.Type, l.Value = typ, &v
		return []*serverview.Line{&l}
	}
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		return one(serverview.Counter, m.GetCounter().GetValue())
	case dto.MetricType_GAUGE:
		return one(serverview.Gauge, m.GetGauge().GetValue())
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		return []*serverview.Line{histogram(m.GetHistogram(), base)}
	case dto.MetricType_SUMMARY:
		return summary(m.GetSummary(), base)
	}
	return one(serverview.Untyped, m.GetUntyped().GetValue())
}

func histogram(h *dto.Histogram, base serverview.Line) *serverview.Line {
	l := base
	l.Type = serverview.Histogram
	count := float64(h.GetSampleCount())
	if h.GetSampleCountFloat() != 0 {
		count = h.GetSampleCountFloat()
	}
	sum := h.GetSampleSum()
	l.Count, l.Sum = &count, &sum
	inf := false
	for _, b := range h.GetBucket() {
		n := float64(b.GetCumulativeCount())
		if b.GetCumulativeCountFloat() != 0 {
			n = b.GetCumulativeCountFloat()
		}
		inf = inf || math.IsInf(b.GetUpperBound(), 1)
		l.Buckets = append(l.Buckets, serverview.Bucket{LE: le(b.GetUpperBound()), Count: n})
	}
	if !inf {
		// The count is +Inf's bucket, which some encoders leave out.
		l.Buckets = append(l.Buckets, serverview.Bucket{LE: "+Inf", Count: count})
	}
	return &l
}

// le is a bound as Prometheus' own text encoder writes the label.
func le(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func summary(s *dto.Summary, base serverview.Line) []*serverview.Line {
	var out []*serverview.Line
	for _, q := range s.GetQuantile() {
		l := base
		l.Labels = withLabel(base.Labels, "quantile", le(q.GetQuantile()))
		v := q.GetValue()
		l.Type, l.Value = serverview.Summary, &v
		out = append(out, &l)
	}
	for _, part := range []struct {
		suffix string
		v      float64
	}{{"_sum", s.GetSampleSum()}, {"_count", float64(s.GetSampleCount())}} {
		l := base
		l.Name += part.suffix
		v := part.v
		l.Type, l.Value = serverview.Summary, &v
		out = append(out, &l)
	}
	return out
}

func withLabel(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

func finite(l *serverview.Line) bool {
	ok := func(p *float64) bool { return p == nil || !(math.IsNaN(*p) || math.IsInf(*p, 0)) }
	if !ok(l.Value) || !ok(l.Count) || !ok(l.Sum) {
		return false
	}
	for _, b := range l.Buckets {
		if !ok(&b.Count) {
			return false
		}
	}
	return true
}

// yieldEvery is how many series the scraper handles between yields of
// its P: a few tens of µs of work.
const yieldEvery = 256

// errMalformed marks a body the library could not parse.
type errMalformed struct{ err error }

func (e errMalformed) Error() string { return fmt.Sprintf("malformed exposition: %v", e.err) }
func (e errMalformed) Unwrap() error { return e.err }

// pairs are m's labels as SeriesKey takes them.
func pairs(m *dto.Metric) [][2]string {
	out := make([][2]string, len(m.GetLabel()))
	for i, lp := range m.GetLabel() {
		out[i] = [2]string{lp.GetName(), lp.GetValue()}
	}
	return out
}

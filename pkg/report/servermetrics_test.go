package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/netloadgen/netloadgen/pkg/serverview"
)

const ep = "http://127.0.0.1:1/metrics"

func gaugeLine(t float64, name string, value any, labels string) string {
	return fmt.Sprintf(`{"t":%g,"endpoint":%q,"name":%q,"labels":{%s},"type":"gauge","value":%v}`+"\n", t, ep, name, labels, value)
}

func counterLine(t float64, name string, value float64) string {
	return fmt.Sprintf(`{"t":%g,"endpoint":%q,"name":%q,"labels":{},"type":"counter","value":%g}`+"\n", t, ep, name, value)
}

func trackOf(t *testing.T, ss *serverSeries, name string) *track {
	t.Helper()
	for _, tr := range ss.Tracks {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no track %s among %d", name, len(ss.Tracks))
	return nil
}

// TestReadServerMetricsFixture: the fixture's plotted series become tracks
// (a metric the report does not plot does not), a gauge as scraped, a
// counter as its rate between scrapes, a histogram as its mean over each
// interval; read a byte at a time, the same.
func TestReadServerMetricsFixture(t *testing.T) {
	b, err := os.ReadFile("testdata/serverview/server_metrics.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []io.Reader{bytes.NewReader(b), iotest.OneByteReader(bytes.NewReader(b))} {
		ss, err := readServerMetrics(r, 0.01, maxMetricsBytes)
		if err != nil {
			t.Fatal(err)
		}
		if len(ss.Tracks) != 4 || ss.Lines != 45 || ss.Truncated {
			t.Fatalf("%d tracks, %d lines, truncated %v; want 4, 45, false", len(ss.Tracks), ss.Lines, ss.Truncated)
		}
		q := trackOf(t, ss, "sutproxy_queue_depth").points()
		want := []float64{0, 2, 4, 6, 3, 2, 2, 1, 0}
		if len(q) != len(want) {
			t.Fatalf("queue depth: %v", q)
		}
		for i, w := range want {
			if q[i].V != w || math.Abs(q[i].T-(0.05+float64(i))) > 1e-9 {
				t.Errorf("queue depth point %d: %+v, want %v at %v", i, q[i], w, 0.05+float64(i))
			}
		}
		rate := trackOf(t, ss, "sutproxy_requests_total").points()
		if len(rate) != 8 || math.Abs(rate[0].V-500) > 1e-9 || math.Abs(rate[0].T-0.55) > 1e-9 || math.Abs(rate[7].V-514) > 1e-9 {
			t.Errorf("requests/s: %+v", rate)
		}
		batch := trackOf(t, ss, "sutproxy_batch_size").points()
		if len(batch) != 8 || math.Abs(batch[0].V-1.25) > 1e-12 {
			t.Errorf("batch size: %+v", batch)
		}
		if tr := trackOf(t, ss, "DCGM_FI_DEV_GPU_UTIL"); tr.Kind != serverview.KindGPUUtil || tr.Labels["gpu"] != "0" {
			t.Errorf("GPU track: %+v", tr)
		}
	}
}

// endless repeats one line forever.
type endless struct {
	line []byte
	off  int
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.line[e.off:])
		n += c
		e.off = (e.off + c) % len(e.line)
	}
	return n, nil
}

// TestReadServerMetricsHostile: whatever the file holds, the reader keeps
// a bounded part and says what it left out; a line it needs that is not a
// sample is an error naming the line, but for a last line cut short.
func TestReadServerMetricsHostile(t *testing.T) {
	q := "sutproxy_queue_depth"
	good := gaugeLine(1, q, 3, "")
	cases := []struct {
		name    string
		in      string
		err     string // substring; "" no error
		tracks  int
		points  int // of the first track
		dropped int
	}{
		{"empty", "", "", 0, 0, 0},
		{"times no run has", gaugeLine(1e300, q, 1, "") + gaugeLine(-1e300, q, 1, "") + gaugeLine(9e18, q, 1, "") + good, "", 1, 1, 0},
		{"a scrape before the start draws nothing but counts for a rate", gaugeLine(-0.5, q, 1, "") + good +
			counterLine(-0.5, "sutproxy_requests_total", 0) + counterLine(0.5, "sutproxy_requests_total", 100), "", 2, 1, 0},
		{"written with spaces", `{"t": 1, "endpoint": "u", "name": "sutproxy_queue_depth", "labels": {}, "type": "gauge", "value": 4}` + "\n", "", 1, 1, 0},
		{"a label called name", `{"t":1,"endpoint":"u","labels":{"name":"sutproxy_queue_depth"},"name":"other","type":"gauge","value":4}` + "\n" +
			`{"t":1,"endpoint":"u","labels":{"name":"other"},"name":"sutproxy_queue_depth","type":"gauge","value":4}` + "\n", "", 1, 1, 0},
		{"blank lines", "\n\n" + good + "\n", "", 1, 1, 0},
		{"malformed plotted line", good + `{"t":2,"name":"sutproxy_queue_depth",` + "\n" + good, "line 2", 0, 0, 0},
		{"no t", good + `{"name":"sutproxy_queue_depth","type":"gauge","value":1}` + "\n", "line 2", 0, 0, 0},
		{"a value not a number", good + gaugeLine(2, q, `"many"`, ""), "line 2", 0, 0, 0},
		{"an unplotted line is not read", good + "not json at all\n" + good, "", 1, 1, 0},
		{"last line cut short", good + gaugeLine(2, q, 5, "") + `{"t":3,"endpoint":"x","name":"sutproxy_queue_d`, "", 1, 2, 0},
		{"a line over 1 MiB", good + `{"t":2,"name":"sutproxy_queue_depth","labels":{"x":"` + strings.Repeat("a", maxMetricsLine) + `"}}` + "\n", "longer than", 0, 0, 0},
		{"NaN, Inf and null skipped", gaugeLine(1, q, `"NaN"`, "") + gaugeLine(2, q, `"+Inf"`, "") + gaugeLine(3, q, "null", "") + gaugeLine(4, q, 7, ""), "", 1, 1, 0},
		{"counter reset and a step back in time draw no rate",
			counterLine(1, "sutproxy_requests_total", 100) + counterLine(2, "sutproxy_requests_total", 300) +
				counterLine(3, "sutproxy_requests_total", 10) + counterLine(2.5, "sutproxy_requests_total", 50) +
				counterLine(4, "sutproxy_requests_total", 80), "", 1, 2, 0},
		{"too many series", func() string {
			var b strings.Builder
			for i := range 100 {
				b.WriteString(gaugeLine(1, q, i, fmt.Sprintf(`"model":"m%d"`, i)))
				b.WriteString(gaugeLine(2, q, i, fmt.Sprintf(`"model":"m%d"`, i)))
			}
			return b.String()
		}(), "", maxTracksPerKind, 2, 100 - maxTracksPerKind},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ss, err := readServerMetrics(strings.NewReader(c.in), 0.01, maxMetricsBytes)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ss.Tracks) != c.tracks || ss.Dropped[serverview.KindQueue] != c.dropped {
				t.Fatalf("%d tracks, %d dropped; want %d, %d", len(ss.Tracks), ss.Dropped[serverview.KindQueue], c.tracks, c.dropped)
			}
			if c.tracks > 0 {
				if p := ss.Tracks[0].points(); len(p) != c.points {
					t.Errorf("points %+v, want %d", p, c.points)
				}
				for _, p := range ss.Tracks[0].points() {
					if p.V < 0 || !finite(p.V) {
						t.Errorf("point %+v", p)
					}
				}
			}
		})
	}
}

// TestReadServerMetricsEndless: an endless file is read to the limit and
// said to be cut.
func TestReadServerMetricsEndless(t *testing.T) {
	ss, err := readServerMetrics(&endless{line: []byte(gaugeLine(1, "sutproxy_queue_depth", 3, ""))}, 0.01, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !ss.Truncated || ss.Lines == 0 || ss.Lines > 1<<20/50 {
		t.Errorf("truncated %v after %d lines", ss.Truncated, ss.Lines)
	}
}

// TestDownsampler: any number of points over any span keep at most
// maxBins, each bin's mean and maximum those of its points, the total
// of value × count unchanged.
func TestDownsampler(t *testing.T) {
	d := downsampler{width: 0.01}
	total, peak := 0.0, 0.0
	for i := range 100_000 {
		v := float64(i % 97)
		if i == 77_777 {
			v = 1e6
		}
		d.add(float64(i)*0.1, v)
		total += v
		peak = math.Max(peak, v)
	}
	pts := d.points()
	if len(pts) > maxBins || len(pts) < maxBins/2 {
		t.Fatalf("%d points", len(pts))
	}
	sum, top, n := 0.0, 0.0, int64(0)
	for _, p := range pts {
		sum += p.V * float64(p.N)
		top = math.Max(top, p.Max)
		n += p.N
	}
	if n != 100_000 || math.Abs(sum-total) > 1e-6*total || top != peak {
		t.Errorf("n %d sum %v top %v; want 100000, %v, %v", n, sum, top, total, peak)
	}
}

// TestServerChartsLeaveOutIdleRoutes: a requests counter that did not
// grow (a route the run did not use) draws no line; one that grew does.
func TestServerChartsLeaveOutIdleRoutes(t *testing.T) {
	in := counterLine(0, "sutproxy_requests_total", 7) + counterLine(1, "sutproxy_requests_total", 7) +
		strings.ReplaceAll(counterLine(0, "sutproxy_requests_total", 0)+counterLine(1, "sutproxy_requests_total", 500), `"labels":{}`, `"labels":{"route":"infer"}`)
	ss, err := readServerMetrics(strings.NewReader(in), 0.01, maxMetricsBytes)
	if err != nil || len(ss.Tracks) != 2 {
		t.Fatalf("%v, %d tracks", err, len(ss.Tracks))
	}
	cs := serverCharts([]*Run{{Name: "r", serverSeries: ss}}, [2]float64{0, 1})
	if len(cs) != 1 || len(cs[0].Lines) != 1 || !strings.Contains(cs[0].Lines[0].Label, `route="infer"`) || cs[0].Lines[0].Points[0].Y != 500 {
		t.Errorf("charts %+v", cs)
	}
}

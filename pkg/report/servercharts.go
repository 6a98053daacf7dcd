package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// serverChartOf is each plotted kind's chart.
var serverChartOf = map[serverview.Kind]chart{
	serverview.KindQueue:     {ID: "server-queue", Title: "Server: queue depth", YLabel: "requests waiting"},
	serverview.KindBatch:     {ID: "server-batch", Title: "Server: batch size", YLabel: "requests per batch"},
	serverview.KindKVCache:   {ID: "server-kv-cache", Title: "Server: KV cache use", YLabel: "share in use"},
	serverview.KindGPUUtil:   {ID: "server-gpu", Title: "Server: GPU utilisation", YLabel: "utilisation"},
	serverview.KindQueueTime: {ID: "server-queue-time", Title: "Server: queue time per request", YLabel: "ms"},
	serverview.KindRequests:  {ID: "server-requests", Title: "Server: requests answered per second", YLabel: "requests/s"},
}

// maxDotted is the most points a server series is drawn with a dot each.
const maxDotted = 120

// dashes tell a run's series apart within a chart; colour tells the runs.
var dashes = []string{"", dashed, dotted, "10 3 2 3", "4 2", "1 5"}

// timeSpan is the x range in s that the charts over time share: the
// longest run, and any server scrape past its end (the drain).
func timeSpan(runs []*Run) [2]float64 {
	end := 0.0
	for _, r := range runs {
		if r.Result == nil {
			continue
		}
		end = math.Max(end, float64(r.Result.DurationNs)/1e9)
		if r.serverSeries == nil {
			continue
		}
		for _, t := range r.serverSeries.Tracks {
			for _, p := range t.points() {
				end = math.Max(end, p.T)
			}
		}
	}
	return [2]float64{0, end}
}

// serverCharts draw the server's series over the run, a chart per kind
// (queue depth, batch size, KV cache, GPU utilisation, queue time,
// requests/s) in serverview's order, the runs overlaid; nil without any.
func serverCharts(runs []*Run, span [2]float64) []*chart {
	charts := map[serverview.Kind]*chart{}
	for i, r := range runs {
		if r.serverSeries == nil {
			continue
		}
		endpoints := map[string]bool{}
		for _, t := range r.serverSeries.Tracks {
			endpoints[t.Endpoint] = true
		}
		n := map[serverview.Kind]int{}
		for _, t := range r.serverSeries.Tracks {
			if t.Kind == serverview.KindRequests && allZero(t.points()) {
				continue // a route the run did not use (the server's probes, its metadata)
			}
			c := charts[t.Kind]
			if c == nil {
				tmpl := serverChartOf[t.Kind]
				c = &tmpl
				c.XLabel, c.XSpan = "time (s)", span
				charts[t.Kind] = c
			}
			l := line{Label: r.Name + " " + trackLabel(t, len(endpoints) > 1), Color: colorOf(i), Dash: dashes[n[t.Kind]%len(dashes)]}
			n[t.Kind]++
			for _, p := range t.points() {
				note := fmt.Sprintf("%gs: %s", round3(p.T), fmtValue(p.V))
				if p.N > 1 {
					note += fmt.Sprintf(" (mean of %d scrapes, max %s)", p.N, fmtValue(p.Max))
				}
				l.Points = append(l.Points, pt{X: p.T, Y: p.V, Note: note})
			}
			// A short run's few scrapes each get a dot and its figure;
			// a long run's many draw a line alone, as the client's do.
			l.Marker = len(l.Points) <= maxDotted
			c.Lines = append(c.Lines, l)
		}
	}
	var out []*chart
	for _, p := range plotted {
		if c := charts[p.Kind]; c != nil {
			out = append(out, c)
		}
	}
	return out
}

// trackLabel is a series as Prometheus writes it, name{labels}, with its
// endpoint when the run scraped more than one.
func trackLabel(t *track, withEndpoint bool) string {
	s := t.Name
	if len(t.Labels) > 0 {
		parts := []string{}
		for _, k := range slices.Sorted(maps.Keys(t.Labels)) {
			parts = append(parts, k+"="+strconv.Quote(t.Labels[k]))
		}
		s += "{" + strings.Join(parts, ",") + "}"
	}
	if t.Type == serverview.Counter {
		s += " rate"
	} else if t.Type == serverview.Histogram {
		s += " mean"
	}
	if withEndpoint {
		s += " at " + t.Endpoint
	}
	return s
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// fmtValue writes a metric's value to four significant figures.
func fmtValue(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func allZero(ps []binPoint) bool {
	for _, p := range ps {
		if p.V != 0 {
			return false
		}
	}
	return true
}

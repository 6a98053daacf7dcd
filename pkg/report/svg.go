package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
)

// chart is one line chart drawn as inline SVG.
type chart struct {
	ID             string // data-chart, for tests and links
	Title          string
	XLabel, YLabel string
	// XTicks replace the automatic linear ticks (the spectrum's
	// percentiles).
	XTicks []tick
	Lines  []line
	// HLines are horizontal references (a latency bound); VLines vertical
	// marks (a load shape's stage boundaries).
	HLines []hline
	VLines []vline
	// Diagonal draws y = x (achieved against target).
	Diagonal bool
	// XSpan, when its end is past its start, is an x range the axis
	// covers whatever the data: the charts over time share the run's, so
	// the server's series line up under the client's.
	XSpan [2]float64
	// ClipHLines leaves out of the y range a reference far above the
	// data (a 100 ms bound over 5 ms latencies would flatten them), naming
	// it at the top instead.
	ClipHLines bool
}

type line struct {
	Label  string // a point's tooltip prefix
	Color  string
	Dash   string // stroke-dasharray; "" solid
	Marker bool   // a dot at each point
	NoLine bool   // dots alone
	// Bare draws the line alone, never a marker, not even where a point
	// stands alone: its points are other lines' markers.
	Bare bool
	// Shape is the marker's: "" a dot, shapeSquare a square. A line with
	// a shape shows its marker in the legend, not a stroke.
	Shape string
	// Stage is a scout search's trial stage its markers are (each marker's
	// data-trial-stage; "" none).
	Stage  string
	Points []pt
}

// shapeSquare is a marker drawn as a square: a verified (full-length)
// trial of a scout search, beside the scouts' dots.
const shapeSquare = "square"

type pt struct {
	X, Y  float64
	Note  string // tooltip
	Empty bool   // hollow marker (a failed trial)
}

type tick struct {
	V     float64
	Label string
}

type hline struct {
	Y     float64
	Label string
	Color string
}

// The plot area inside the SVG's viewBox.
const (
	chartW, chartH = 760.0, 300.0
	padL, padR     = 72.0, 40.0
	padT, padB     = 28.0, 46.0
)

// bounds returns the data's x and y ranges (y from 0).
func (c *chart) bounds() (x0, x1, y1 float64) {
	x0, x1 = math.Inf(1), math.Inf(-1)
	for _, l := range c.Lines {
		for _, p := range l.Points {
			if finite(p.X) && finite(p.Y) {
				x0, x1 = math.Min(x0, p.X), math.Max(x1, p.X)
				y1 = math.Max(y1, p.Y)
			}
		}
	}
	for _, t := range c.XTicks {
		x0, x1 = math.Min(x0, t.V), math.Max(x1, t.V)
	}
	if c.XSpan[1] > c.XSpan[0] {
		x0, x1 = math.Min(x0, c.XSpan[0]), math.Max(x1, c.XSpan[1])
	}
	for _, v := range c.VLines {
		x0, x1 = math.Min(x0, v.X), math.Max(x1, v.X)
	}
	dataMax := y1
	for _, h := range c.HLines {
		if !c.clipped(h, dataMax) {
			y1 = math.Max(y1, h.Y)
		}
	}
	if math.IsInf(x0, 0) {
		x0, x1 = 0, 1
	}
	if x1 <= x0 {
		x1 = x0 + 1
	}
	if y1 <= 0 {
		y1 = 1
	}
	return x0, x1, y1 * 1.05
}

// dataMax is the largest y of the lines.
func (c *chart) dataMax() float64 {
	m := 0.0
	for _, l := range c.Lines {
		for _, p := range l.Points {
			if finite(p.Y) {
				m = math.Max(m, p.Y)
			}
		}
	}
	return m
}

// clipped: h is left out of a chart whose data reach dataMax.
func (c *chart) clipped(h hline, dataMax float64) bool {
	return c.ClipHLines && dataMax > 0 && h.Y > 2*dataMax
}

// svg renders the chart. Every string in it is escaped here, so the
// result is safe to mark as template.HTML.
func (c *chart) svg() template.HTML {
	x0, x1, y1 := c.bounds()
	ytks := niceTicks(0, y1)
	y1 = math.Max(y1, ytks[len(ytks)-1].V)
	xtks := c.XTicks
	if xtks == nil {
		xtks = niceTicks(x0, x1)
		x0, x1 = math.Min(x0, xtks[0].V), math.Max(x1, xtks[len(xtks)-1].V)
	}
	sx := func(v float64) float64 { return padL + (v-x0)/(x1-x0)*(chartW-padL-padR) }
	sy := func(v float64) float64 { return chartH - padB - v/y1*(chartH-padT-padB) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-chart="%s" viewBox="0 0 %g %g" role="img" aria-label="%s">`,
		esc(c.ID), chartW, chartH, esc(c.Title))
	fmt.Fprintf(&b, `<text x="%g" y="16" class="ttl">%s</text>`, padL, esc(c.Title))
	for _, t := range ytks {
		y := sy(t.V)
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><text class="tk" x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
			padL, y, chartW-padR, y, padL-6, y+4, esc(t.Label))
	}
	for _, t := range xtks {
		x := sx(t.V)
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><text class="tk" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			x, padT, x, chartH-padB, x, chartH-padB+16, esc(t.Label))
	}
	fmt.Fprintf(&b, `<text class="lbl" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, (padL+chartW-padR)/2, chartH-8, esc(c.XLabel))
	fmt.Fprintf(&b, `<text class="lbl" x="14" y="%.1f" text-anchor="middle" transform="rotate(-90 14 %.1f)">%s</text>`,
		(padT+chartH-padB)/2, (padT+chartH-padB)/2, esc(c.YLabel))
	if c.Diagonal {
		d := math.Min(x1, y1)
		fmt.Fprintf(&b, `<line class="ref" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"><title>achieved = target</title></line>`,
			sx(math.Max(x0, 0)), sy(math.Max(x0, 0)), sx(d), sy(d))
	}
	above := 0
	for _, h := range c.HLines {
		if c.clipped(h, c.dataMax()) {
			above++
			fmt.Fprintf(&b, `<text class="tk" x="%.1f" y="%.1f" text-anchor="end" fill="%s">%s: above the chart ↑</text>`,
				chartW-padR-4, padT+12*float64(above), esc(h.Color), esc(h.Label))
			continue
		}
		y := sy(h.Y)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="6 4"><title>%s</title></line>`+
			`<text class="tk" x="%.1f" y="%.1f" text-anchor="end" fill="%s">%s</text>`,
			padL, y, chartW-padR, y, esc(h.Color), esc(h.Label), chartW-padR-4, y-4, esc(h.Color), esc(h.Label))
	}
	for _, v := range c.VLines {
		x := sx(v.X)
		fmt.Fprintf(&b, `<line class="stage-mark" data-stage="%d" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"><title>%s</title></line>`+
			`<text class="tk" x="%.1f" y="%.1f">%d</text>`,
			v.Stage, x, padT, x, chartH-padB, esc(v.Label), x+3, padT+10, v.Stage)
	}
	for _, l := range c.Lines {
		writeLine(&b, l, sx, sy)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// staged: some of the chart's lines are a scout search's stages.
func (c *chart) staged() bool {
	return slices.ContainsFunc(c.Lines, func(l line) bool { return l.Stage != "" })
}

// writeLine draws l as polylines broken where a point has no value (a
// second without completions), with dots where asked for or where a point
// stands alone.
func writeLine(b *strings.Builder, l line, sx, sy func(float64) float64) {
	var segs [][]pt
	cur := []pt{}
	for _, p := range l.Points {
		if !finite(p.X) || !finite(p.Y) {
			if len(cur) > 0 {
				segs, cur = append(segs, cur), []pt{}
			}
			continue
		}
		cur = append(cur, p)
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	for _, seg := range segs {
		if len(seg) > 1 && !l.NoLine {
			coords := make([]string, len(seg))
			for i, p := range seg {
				coords[i] = fmt.Sprintf("%.1f,%.1f", sx(p.X), sy(p.Y))
			}
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.8"`, esc(l.Color))
			if l.Dash != "" {
				fmt.Fprintf(b, ` stroke-dasharray="%s"`, esc(l.Dash))
			}
			fmt.Fprintf(b, ` points="%s"><title>%s</title></polyline>`, strings.Join(coords, " "), esc(l.Label))
		}
		if l.Bare || (!l.Marker && len(seg) > 1) {
			continue
		}
		for _, p := range seg {
			fill := l.Color
			if p.Empty {
				fill = "#fff"
			}
			writeMarker(b, l, sx(p.X), sy(p.Y), fill, l.Label+": "+p.Note)
		}
	}
}

// writeMarker draws one of l's markers at (x, y), titled.
func writeMarker(b *strings.Builder, l line, x, y float64, fill, title string) {
	stage := ""
	if l.Stage != "" {
		stage = fmt.Sprintf(` data-trial-stage="%s"`, esc(l.Stage))
	}
	if l.Shape == shapeSquare {
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s" stroke="%s"%s><title>%s</title></rect>`,
			x-4, y-4, esc(fill), esc(l.Color), stage, esc(title))
		return
	}
	fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s"%s><title>%s</title></circle>`,
		x, y, esc(fill), esc(l.Color), stage, esc(title))
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func esc(s string) string { return html.EscapeString(s) }

// niceTicks are about five round ticks covering [lo, hi].
func niceTicks(lo, hi float64) []tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return []tick{{lo, fmtTick(lo, 1)}, {lo + 1, fmtTick(lo+1, 1)}}
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []tick
	for v := math.Floor(lo/step) * step; ; v += step {
		out = append(out, tick{v, fmtTick(v, step)})
		if v >= hi-step*1e-9 || len(out) > 20 {
			break
		}
	}
	return out
}

// fmtTick writes v with as many decimals as step needs (2.5: one).
func fmtTick(v, step float64) string {
	dec := 0
	for dec < 6 {
		scaled := step * math.Pow(10, float64(dec))
		if math.Abs(scaled-math.Round(scaled)) < 1e-9*scaled {
			break
		}
		dec++
	}
	if math.Abs(v) < step*1e-9 {
		v = 0
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// percentileTicks label the spectrum's x axis, 0 to 99.99…% at each
// decade of 1/(1−p), up to top.
func percentileTicks(top float64) []tick {
	labels := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%", "99.99999%", "99.999999%"}
	n := min(int(math.Ceil(top)), len(labels)-1)
	out := make([]tick, 0, n+1)
	for i := 0; i <= max(n, 1); i++ {
		out = append(out, tick{float64(i), labels[i]})
	}
	return out
}

// legend lists the chart's lines under it, each with a sample of its
// stroke and its label: a chart whose lines are series a server named (a
// metric per model, per GPU) must say which is which without a hover.
func legend(c *chart) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, `<ul class="series" data-legend="%s">`, esc(c.ID))
	for _, l := range c.Lines {
		if l.Shape != "" || l.Stage != "" {
			// A line of markers alone: its key is its marker.
			fmt.Fprintf(&b, `<li data-trial-stage="%s"><svg class="key" viewBox="0 0 28 10" width="28" height="10" aria-hidden="true">`, esc(l.Stage))
			writeMarker(&b, line{Color: l.Color, Shape: l.Shape}, 14, 5, l.Color, l.Label)
			fmt.Fprintf(&b, `</svg>%s</li>`, esc(l.Label))
			continue
		}
		fmt.Fprintf(&b, `<li><svg class="key" viewBox="0 0 28 10" width="28" height="10" aria-hidden="true"><line x1="1" y1="5" x2="27" y2="5" stroke="%s" stroke-width="2"`, esc(l.Color))
		if l.Dash != "" {
			fmt.Fprintf(&b, ` stroke-dasharray="%s"`, esc(l.Dash))
		}
		fmt.Fprintf(&b, `/></svg>%s</li>`, esc(l.Label))
	}
	b.WriteString(`</ul>`)
	return template.HTML(b.String())
}

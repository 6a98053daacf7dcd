package report

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// partColor colours the parts of a request's time, the same in every run's
// bar so runs compare part by part.
var partColor = map[string]string{
	serverview.PartNetwork: "#009E73",
	serverview.PartQueue:   "#D55E00",
	serverview.PartCompute: "#0072B2",
	serverview.PartOther:   "#999999",
}

// partOrder is the bar's order, left to right: the network and the client
// first (what the request crossed first), then the server's queue, its
// compute and the rest of its time.
var partOrder = []string{serverview.PartNetwork, serverview.PartQueue, serverview.PartCompute, serverview.PartOther}

// barRow is one run's bar.
type barRow struct {
	Run, Color string
	Shares     map[string]float64
	TotalNs    float64
}

// The bar chart's layout in its viewBox.
const (
	barLabelW, barPadR = 170.0, 90.0
	barH, barGap       = 26.0, 12.0
	barTop             = 30.0
)

// breakdownRows are the runs whose result.json has the server's
// statistics, each split as serverview.Shares splits it.
func breakdownRows(runs []*Run) []barRow {
	var rows []barRow
	for i, r := range runs {
		if r.Result == nil || r.Result.Server == nil {
			continue
		}
		shares, total := serverview.Shares(r.Result.Server.Statistics, runlog.BreakdownClient(r.Result))
		if shares == nil {
			continue
		}
		row := barRow{Run: r.Name, Color: colorOf(i), Shares: map[string]float64{}, TotalNs: total}
		for _, s := range shares {
			row.Shares[s.Part] = s.Ns
		}
		rows = append(rows, row)
	}
	return rows
}

// breakdownBar draws a stacked bar per run of the parts of its mean
// latency from the statistics extension, on one scale so compared runs line
// up; "" when no run has them. Every segment carries its part, run and
// exact ns (data-part, data-run, data-value) and says them in its title.
func breakdownBar(runs []*Run) template.HTML {
	rows := breakdownRows(runs)
	if len(rows) == 0 {
		return ""
	}
	scale := 0.0
	for _, r := range rows {
		scale = math.Max(scale, math.Max(r.TotalNs, positiveSum(r.Shares)))
	}
	plotW := chartW - barLabelW - barPadR
	sx := func(ns float64) float64 { return math.Max(ns, 0) / scale * plotW }
	height := barTop + float64(len(rows))*(barH+barGap) + 50
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-chart="breakdown" viewBox="0 0 %g %g" role="img" aria-label="Where the time went">`, chartW, height)
	fmt.Fprintf(&b, `<text x="%g" y="16" class="ttl">Where the time went: the mean latency, from the server's statistics</text>`, barLabelW)
	for i, r := range rows {
		y := barTop + float64(i)*(barH+barGap)
		fmt.Fprintf(&b, `<rect x="4" y="%.1f" width="12" height="12" fill="%s"/><text class="lbl" x="22" y="%.1f">%s</text>`,
			y+barH/2-6, esc(r.Color), y+barH/2+4, esc(r.Run))
		x := barLabelW
		for _, part := range partOrder {
			ns, ok := r.Shares[part]
			if !ok {
				continue
			}
			w := sx(ns)
			title := fmt.Sprintf("%s: %s %.3f ms (%.1f%% of %.3f ms mean latency)", r.Run, part, ns/1e6, 100*ns/r.TotalNs, r.TotalNs/1e6)
			fmt.Fprintf(&b, `<rect class="seg" data-run="%s" data-part="%s" data-value="%s" x="%.1f" y="%.1f" width="%.1f" height="%g" fill="%s"><title>%s</title></rect>`,
				esc(r.Run), esc(part), exactF(ns), x, y, w, barH, esc(partColor[part]), esc(title))
			if w > 44 {
				fmt.Fprintf(&b, `<text class="seg-t" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x+w/2, y+barH/2+4, esc(serverview.FormatMs(ns)))
			}
			x += w
		}
		fmt.Fprintf(&b, `<text class="tk" x="%.1f" y="%.1f">%s</text>`, x+6, y+barH/2+4, esc(serverview.FormatMs(r.TotalNs)))
	}
	y := barTop + float64(len(rows))*(barH+barGap) + 10
	x := barLabelW
	for _, part := range partOrder {
		if !anyHas(rows, part) {
			continue
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/><text class="tk" x="%.1f" y="%.1f">%s</text>`,
			x, y, esc(partColor[part]), x+16, y+10, esc(part))
		x += 16 + 7*float64(len(part)) + 18
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func positiveSum(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += math.Max(v, 0)
	}
	return t
}

func anyHas(rows []barRow, part string) bool {
	for _, r := range rows {
		if _, ok := r.Shares[part]; ok {
			return true
		}
	}
	return false
}

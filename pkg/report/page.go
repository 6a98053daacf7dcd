package report

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/search"
	"github.com/netloadgen/netloadgen/pkg/version"
)

// Options are what a page says beyond its runs.
type Options struct {
	// Title heads the page (default "netloadgen report").
	Title string
	// Now stamps the page (default time.Now).
	Now time.Time
}

// page is the template's data.
type page struct {
	Title, Generated, Version string
	Runs                      []runView
	Table                     figureTable
	Spectrum                  template.HTML
	SpectrumNotes             []string
	Time                      []template.HTML
	Lateness                  template.HTML
	TimeNotes                 []string
	Trials                    []template.HTML
	// Server are the server's series over the run (server_metrics.jsonl),
	// under the client's; Breakdown the bar of where the time went.
	Server    []template.HTML
	Breakdown template.HTML
	// HasServer: a run's result.json has what the server said (its
	// statistics or metrics).
	HasServer bool
	// HasResult: a run has result.json (not only a search's record);
	// Sweep: a run is a load sweep.
	HasResult, Sweep bool
	// Scout: a search's trials are marked by stage (scout, verify).
	Scout bool
}

// figureTable compares the runs' figures: a row per figure, a cell per run.
type figureTable struct {
	Rows []figureRow
}

type figureRow struct {
	Label, Unit string
	Cells       []figureCell
}

type figureCell struct {
	Run string
	figure
	Present bool
}

// Write renders runs as one HTML page to w. Runs are overlaid in the
// order given, each in its own colour.
func Write(w io.Writer, runs []*Run, o Options) error {
	if len(runs) == 0 {
		return errors.New("report: no runs")
	}
	p := page{Title: o.Title, Version: version.String()}
	if p.Title == "" {
		p.Title = "netloadgen report"
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	p.Generated = fmtTime(now)
	for i, r := range runs {
		p.Runs = append(p.Runs, newRunView(i, r))
		p.HasResult = p.HasResult || r.Result != nil
		p.Sweep = p.Sweep || (r.Search != nil && r.Search.Mode == search.ModeSweep)
		p.HasServer = p.HasServer || (r.Result != nil && (r.Result.Server != nil || r.Result.ServerMetrics != nil))
		if r.Result != nil && r.Spectrum == nil {
			p.SpectrumNotes = append(p.SpectrumNotes, r.Name+": no latency.hlog")
		} else if r.Spectrum != nil && r.Spectrum.Count == 0 {
			p.SpectrumNotes = append(p.SpectrumNotes, r.Name+": no completed samples")
		}
		switch {
		case r.Result != nil && r.Result.ClosedLoop != nil && r.Series == nil:
			p.TimeNotes = append(p.TimeNotes, r.Name+": a closed-loop run writes no "+runlog.TimeseriesJSONFile)
		case r.Result != nil && r.Series == nil:
			p.TimeNotes = append(p.TimeNotes, r.Name+": no "+runlog.TimeseriesJSONFile+" (written by newer netloadgen runs)")
		case r.Series != nil && r.SeriesFromHlog:
			p.TimeNotes = append(p.TimeNotes, r.Name+": no "+runlog.TimeseriesJSONFile+"; drawn from latency.hlog (completed samples by issue second, no issue or failure counts, no lateness)")
		}
	}
	p.Table = tableOf(p.Runs)
	span := timeSpan(runs)
	for _, c := range serverCharts(runs, span) {
		p.Server = append(p.Server, c.svg()+legend(c))
	}
	p.Breakdown = breakdownBar(runs)
	if c := spectrumChart(runs); c != nil {
		p.Spectrum = c.svg()
	}
	if cs := timeCharts(runs); cs != nil {
		for _, c := range cs {
			if c != nil {
				c.XSpan = span // the server's series line up under these
			}
		}
		p.Time = []template.HTML{cs[0].svg(), cs[1].svg()}
		if cs[2] != nil {
			p.Lateness = cs[2].svg()
		}
	}
	p.Trials, p.Scout = trialHTML(runs)
	// Rendered whole before writing: a template error leaves w untouched.
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// tableOf lines up the runs' figures by key and label, in the order they
// first appear: the label too, since metric.value is a different measure
// in each scenario (samples/s, a latency percentile).
func tableOf(runs []runView) figureTable {
	type rowID struct{ key, label string }
	var ids []rowID
	rows := map[rowID]*figureRow{}
	for _, r := range runs {
		for _, f := range r.Figures {
			id := rowID{f.Key, f.Label}
			if rows[id] == nil {
				ids = append(ids, id)
				rows[id] = &figureRow{Label: f.Label, Unit: f.Unit}
			}
		}
	}
	var t figureTable
	for _, id := range ids {
		row := rows[id]
		for _, r := range runs {
			c := figureCell{Run: r.Name}
			for _, f := range r.Figures {
				if f.Key == id.key && f.Label == id.label {
					c.figure, c.Present = f, true
				}
			}
			row.Cells = append(row.Cells, c)
		}
		t.Rows = append(t.Rows, *row)
	}
	return t
}

//go:embed page.html.tmpl
var pageHTML string

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"verdict": verdictOf,
	"time":    fmtTime,
	"pct":     pctLabel,
}).Parse(pageHTML))

// trialHTML draws the searches' trials charts; scout: a scout search's
// stages are marked, and its dots and squares get their legend.
func trialHTML(runs []*Run) (out []template.HTML, scout bool) {
	for _, c := range trialCharts(runs) {
		if c.staged() {
			out = append(out, c.svg()+legend(c))
			scout = true
			continue
		}
		out = append(out, c.svg())
	}
	return out, scout
}

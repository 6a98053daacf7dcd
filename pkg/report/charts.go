package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// The line styles that tell a chart's measures apart; colour tells the runs.
const (
	dashed = "7 4"
	dotted = "2 3"
)

// spectrumChart overlays the runs' percentile spectra on HdrHistogram's
// axis, log10(1/(1−p)), with result.json's exact percentiles as dots and
// the latency bounds as dashed lines.
func spectrumChart(runs []*Run) *chart {
	c := &chart{ID: "spectrum", Title: "Latency by percentile", XLabel: "percentile (log scale of 1/(1−p))", YLabel: "latency (ms)", ClipHLines: true}
	top := 0.0
	bounds := map[uint64]bool{}
	for i, r := range runs {
		if r.Spectrum == nil || len(r.Spectrum.Points) == 0 {
			continue
		}
		l := line{Label: r.Name + " (latency.hlog)", Color: colorOf(i)}
		for _, p := range r.Spectrum.Points {
			x := spectrumX(p.P)
			top = math.Max(top, x)
			l.Points = append(l.Points, pt{X: x, Y: ms(p.Ns), Note: fmt.Sprintf("%s %.3f ms", pctLabel(p.P), ms(p.Ns))})
		}
		c.Lines = append(c.Lines, l)
		exact := line{Label: r.Name + " (result.json)", Color: colorOf(i), Marker: true, NoLine: true}
		// The answered samples' percentiles, as latency.hlog holds only
		// theirs (LoadGen's table lands on a failed sample's INT64_MAX).
		for _, q := range loadgen.Answered(r.Result.SampleLatency, r.Result.SampleLatencyAnswered).Percentiles {
			if q.P < 1 && q.LatencyNs < math.MaxInt64 {
				exact.Points = append(exact.Points, pt{X: spectrumX(q.P), Y: ms(q.LatencyNs), Note: fmt.Sprintf("%s %.3f ms", pctLabel(q.P), ms(q.LatencyNs))})
			}
		}
		c.Lines = append(c.Lines, exact)
		if b := r.Result.Effective.TargetLatencyNs; b > 0 && !bounds[b] {
			bounds[b] = true
			c.HLines = append(c.HLines, hline{Y: ms(int64(b)), Label: fmt.Sprintf("bound %s ms", fmtNum(ms(int64(b)))), Color: "#c00"})
		}
	}
	if len(c.Lines) == 0 {
		return nil
	}
	c.XTicks = percentileTicks(top)
	return c
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// failedMs is where a failed sample's latency (stats.FailedLatency,
// MaxInt64 ns) lands in ms: no latency to draw.
const failedMs = float64(math.MaxInt64) / 1e6 * 0.999

// timeCharts are throughput, latency and issue lateness second by second,
// the runs with a time series overlaid; nil without any.
func timeCharts(runs []*Run) []*chart {
	tput := &chart{ID: "throughput", Title: "Throughput per second", XLabel: "time (s)", YLabel: "samples/s"}
	lat := &chart{ID: "latency-over-time", Title: "Latency per second", XLabel: "time (s)", YLabel: "latency (ms)", ClipHLines: true}
	late := &chart{ID: "lateness-over-time", Title: "Issue lateness per second (p99)", XLabel: "time (s)", YLabel: "lateness (ms)"}
	any := false
	for i, r := range runs {
		ts := r.Series
		if ts == nil || len(ts.Seconds) == 0 {
			continue
		}
		any = true
		col := colorOf(i)
		step := float64(ts.IntervalNs) / 1e9
		completed := line{Label: r.Name + " completed/s", Color: col}
		issued := line{Label: r.Name + " issued/s", Color: col, Dash: dashed}
		failed := line{Label: r.Name + " failed/s", Color: col, Dash: dotted}
		p99 := line{Label: r.Name + " p99", Color: col}
		p50 := line{Label: r.Name + " p50", Color: col, Dash: dashed}
		lp99 := line{Label: r.Name + " lateness p99", Color: col}
		for _, s := range ts.Seconds {
			x := float64(s.Second) * step
			// A sliver at the end has no rate worth drawing (over a few
			// ms it would plunge or soar); its latencies are still its
			// samples'.
			if width, ok := secondWidth(ts, s, r.Result.DurationNs); ok {
				completed.add(x, float64(s.Completed)/width, "%.1f/s")
				issued.add(x, float64(s.Issued)/width, "%.1f/s")
				failed.add(x, float64(s.Failed)/width, "%.1f/s")
			}
			p99.addNs(x, s.P99Ns)
			p50.addNs(x, s.P50Ns)
			lp99.addNs(x, s.LatenessP99Ns)
		}
		if r.SeriesFromHlog {
			completed.Label = r.Name + " completed/s by issue second (latency.hlog)"
			tput.Lines = append(tput.Lines, completed)
		} else {
			tput.Lines = append(tput.Lines, issued, completed, failed)
			late.Lines = append(late.Lines, lp99)
		}
		lat.Lines = append(lat.Lines, p99, p50)
		if b := r.Result.Effective.TargetLatencyNs; b > 0 && len(lat.HLines) == 0 {
			lat.HLines = append(lat.HLines, hline{Y: ms(int64(b)), Label: fmt.Sprintf("bound %s ms", fmtNum(ms(int64(b)))), Color: "#c00"})
		}
	}
	if !any {
		return nil
	}
	// A load shape's stage boundaries, on every chart over time.
	marks := stageMarks(runs)
	tput.VLines, lat.VLines, late.VLines = marks, marks, marks
	if len(late.Lines) == 0 {
		return []*chart{tput, lat, nil}
	}
	return []*chart{tput, lat, late}
}

// secondWidth is how much of interval s the run covered, in seconds: the
// whole interval but for the last, which ends with the run. ok is false
// for a last interval under half an interval, left out of the charts as
// latency.hlog's is. A series from latency.hlog has no partial interval
// left, and a duration it does not cover (0, or past its end) changes
// nothing.
func secondWidth(ts *runlog.Timeseries, s runlog.Second, durationNs int64) (float64, bool) {
	start := int64(s.Second) * ts.IntervalNs
	left := durationNs - start
	if left <= 0 || left >= ts.IntervalNs {
		return float64(ts.IntervalNs) / 1e9, true
	}
	return float64(left) / 1e9, left >= ts.IntervalNs/2
}

func (l *line) add(x, y float64, format string) {
	l.Points = append(l.Points, pt{X: x, Y: y, Note: fmt.Sprintf("%gs: "+format, x, y)})
}

// addNs adds a latency in ms; an interval without one leaves a gap.
func (l *line) addNs(x float64, ns *int64) {
	if ns == nil {
		l.Points = append(l.Points, pt{X: x, Y: math.NaN()})
		return
	}
	l.add(x, ms(*ns), "%.3f ms")
}

// trialCharts plot the searches' trials against their target: the
// throughput achieved (y = x where the server kept up) and the tail
// latency against the bound. A failed trial is a hollow dot. A sweep's
// trials also draw their p50 and p90 (dashed, dotted): the latency-vs-load
// plot.
func trialCharts(runs []*Run) []*chart {
	ach := &chart{ID: "trials-achieved", Title: "Trials: achieved vs target", Diagonal: true}
	tail := &chart{ID: "trials-tail", Title: "Trials: tail latency vs target"}
	bounds := map[float64]bool{}
	sweeps, searches := 0, 0
	for i, r := range runs {
		s := r.Search
		if s == nil || len(s.Trials) == 0 {
			continue
		}
		searches++
		if s.Mode == search.ModeSweep {
			sweeps++
			tail.Lines = append(tail.Lines, sweepLines(r.Name, colorOf(i), s.Trials)...)
		}
		ach.XLabel, ach.YLabel = "target ("+s.Unit+")", "achieved"
		tail.XLabel, tail.YLabel = "target ("+s.Unit+")", "tail latency (ms)"
		trials := slices.SortedStableFunc(slices.Values(s.Trials), func(a, b search.Trial) int { return cmp.Compare(a.Target, b.Target) })
		as, ts := trialLines(r.Name, colorOf(i), trials, s.Strategy == search.StrategyScout)
		ach.Lines = append(ach.Lines, as...)
		tail.Lines = append(tail.Lines, ts...)
		for _, tr := range trials {
			if b := tr.LatencyBoundMs; b > 0 && !bounds[b] {
				bounds[b] = true
				tail.HLines = append(tail.HLines, hline{Y: b, Label: fmt.Sprintf("bound %s ms", fmtNum(b)), Color: "#c00"})
			}
		}
	}
	if len(ach.Lines) == 0 {
		return nil
	}
	if sweeps == searches {
		ach.Title, tail.Title = "Sweep: achieved vs rate asked", "Sweep: latency vs rate asked"
		tail.YLabel = "latency (ms)"
	}
	return []*chart{ach, tail}
}

// trialLines are a search's trials (in target order) on the achieved and
// the tail-latency charts: one line with a dot per trial; for a scout
// search, the line through them all, then the scout trials as dots and the
// verifying (full-length) ones as squares, each a legend entry of its own.
func trialLines(name, color string, trials []search.Trial, scout bool) (ach, tail []line) {
	a := line{Label: name, Color: color, Marker: !scout, Bare: scout}
	t := line{Label: name, Color: color, Marker: !scout, Bare: scout}
	sa := line{Label: name + " scout trials (short)", Color: color, Marker: true, NoLine: true, Stage: search.StageScout}
	va := line{Label: name + " verify trials (full length)", Color: color, Marker: true, NoLine: true, Shape: shapeSquare, Stage: search.StageVerify}
	st, vt := sa, va
	for _, tr := range trials {
		verdict := "fail"
		if tr.Pass {
			verdict = "pass"
		}
		tailMs, tailText := trialTail(tr) // NaN: no answered latency to draw
		if !math.IsNaN(tailMs) {
			tailText = fmt.Sprintf("%.3f ms%s", tailMs, failedNote(tr))
		}
		stage := ""
		if tr.Stage != "" {
			stage = fmt.Sprintf(" (%s, %s s)", tr.Stage, fmtNum(tr.MinDurationS))
		}
		note := fmt.Sprintf("trial %d%s, target %s: achieved %.1f, %s %s, %s", tr.Index, stage, fmtNum(tr.Target), tr.Achieved, pctLabel(tr.Percentile), tailText, verdict)
		pa, pt := pt{X: tr.Target, Y: tr.Achieved, Note: note, Empty: !tr.Pass}, pt{X: tr.Target, Y: tailMs, Note: note, Empty: !tr.Pass}
		a.Points, t.Points = append(a.Points, pa), append(t.Points, pt)
		switch {
		case !scout:
		case tr.Stage == search.StageVerify:
			va.Points, vt.Points = append(va.Points, pa), append(vt.Points, pt)
		default:
			sa.Points, st.Points = append(sa.Points, pa), append(st.Points, pt)
		}
	}
	if !scout {
		return []line{a}, []line{t}
	}
	return []line{a, sa, va}, []line{t, st, vt}
}

// sweepLines are a sweep's p50 and p90 by rate, in rate order; a
// percentile on a failed sample, or a trial without latencies, leaves a
// gap.
func sweepLines(name, color string, trials []search.Trial) []line {
	trials = slices.SortedStableFunc(slices.Values(trials), func(a, b search.Trial) int { return cmp.Compare(a.Target, b.Target) })
	p50 := line{Label: name + " p50", Color: color, Dash: dashed}
	p90 := line{Label: name + " p90", Color: color, Dash: dotted}
	for _, tr := range trials {
		y50, y90 := math.NaN(), math.NaN()
		l := tr.Latency
		if tr.FailedSamples > 0 && tr.LatencyAnswered != nil {
			l = tr.LatencyAnswered // the answered samples': a failed one's latency is no latency
		}
		if l != nil {
			y50, y90 = sweepMs(l.P50), sweepMs(l.P90)
		}
		p50.Points = append(p50.Points, pt{X: tr.Target, Y: y50, Note: fmt.Sprintf("rate %s: p50 %.3f ms", fmtNum(tr.Target), y50)})
		p90.Points = append(p90.Points, pt{X: tr.Target, Y: y90, Note: fmt.Sprintf("rate %s: p90 %.3f ms", fmtNum(tr.Target), y90)})
	}
	return []line{p50, p90}
}

func sweepMs(v float64) float64 {
	if v == search.FailedPercentile {
		return math.NaN()
	}
	return v
}

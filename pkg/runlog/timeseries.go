package runlog

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/stats"
)

// TimeseriesInterval is the width of a time series bucket: bucket i covers
// [i s, (i+1) s) of the run's clock from its start.
const TimeseriesInterval = loadgen.FailureSecond

// TimeseriesCSVHeader is timeseries.csv's first line (a contract for
// scripts: perf_analyzer -f and k6 --out csv users read it by name).
const TimeseriesCSVHeader = "second,issued,completed,failed,p50_ms,p99_ms,lateness_p99_ms"

// TimeseriesStageColumn is the column timeseries.csv adds, last, for a
// run whose load shape has stages: the stage the second starts in.
const TimeseriesStageColumn = "stage"

// Timeseries is a run's per-second record (timeseries.json). A run whose
// load shape has stages (result.json's stages[]) lists their boundaries
// in Stages, and its CSV has a last column, stage.
type Timeseries struct {
	IntervalNs int64       `json:"interval_ns"`
	Seconds    []Second    `json:"seconds"`
	Stages     []StageMark `json:"stages,omitempty"`
}

// StageMark is one stage's span on the run's clock, in ns from its start.
type StageMark struct {
	Stage   int   `json:"stage"`
	StartNs int64 `json:"start_ns"`
	EndNs   int64 `json:"end_ns"`
}

// stageMarks are res's stages as time series marks.
func stageMarks(res *loadgen.Result) []StageMark {
	var out []StageMark
	for _, s := range res.Stages {
		out = append(out, StageMark{Stage: s.Stage, StartNs: int64(s.StartS * 1e9), EndNs: int64(s.EndS * 1e9)})
	}
	return out
}

// stageAt is the stage whose span holds off ns, the last stage past the
// end, -1 before the first or without stages.
func (ts Timeseries) stageAt(off int64) int {
	k := -1
	for _, m := range ts.Stages {
		if off >= m.StartNs {
			k = m.Stage
		}
	}
	return k
}

// Second is one bucket of a Timeseries. Issued counts the samples whose
// query was issued in it; Completed the samples answered successfully in it
// and Failed the samples that failed in it, both by completion time (samples
// still unanswered when the drain ended fail in the last second). P50Ns and
// P99Ns are exact percentiles (sorted[floor(n·p)], LoadGen's rule) of the
// latencies, from the scheduled time, of the samples completed in it, nil
// when none did; LatenessP99Ns is the p99 of issue lateness (issued −
// scheduled) of the queries issued in it, nil when none was.
type Second struct {
	Second        int    `json:"second"`
	Issued        int64  `json:"issued"`
	Completed     int64  `json:"completed"`
	Failed        int64  `json:"failed"`
	P50Ns         *int64 `json:"p50_ns"`
	P99Ns         *int64 `json:"p99_ns"`
	LatenessP99Ns *int64 `json:"lateness_p99_ns"`
}

// BuildTimeseries computes the per-second time series of a finished run
// from the engine's exact per-sample record and per-query times. The sums
// of Issued, Completed and Failed over the seconds are res's
// samples_issued, samples_completed and samples_failed. Call it after
// run.Execute has returned.
func BuildTimeseries(run *loadgen.Run, res *loadgen.Result) (Timeseries, error) {
	if run == nil || res == nil {
		return Timeseries{}, fmt.Errorf("%w: a time series needs the run and its result", ErrInvalidResult)
	}
	tl := run.Timeline()
	step := int64(TimeseriesInterval)
	n := int(max((res.DurationNs+step-1)/step, 1))
	bucket := func(off int64) int { return min(int(max(off, 0)/step), n-1) }
	ts := Timeseries{IntervalNs: step, Seconds: make([]Second, n), Stages: stageMarks(res)}
	for i := range ts.Seconds {
		ts.Seconds[i].Second = i
	}
	spq := tl.SamplesPerQuery
	// A first pass counts each second's queries and completions, so the
	// second pass can finish a second (its percentiles) as soon as its last
	// value is in and free it: the values held at once are those of the
	// seconds still open, not the run's (issue 28: a run's memory must not
	// grow with the run beyond its record).
	lateness := newSecondValues(n)
	latency := newSecondValues(n)
	// Each query's samples with its scheduled time: successes count by
	// completion time, scheduled + latency (a latency the engine clamped
	// to 0 completes at its scheduled time).
	eachSample := func(fn func(sched int64, d time.Duration)) {
		tl.EachQuery(func(q int, sched, _ int64) bool {
			run.Samples().Each(q*spq, (q+1)*spq, func(_ int, d time.Duration) {
				if d != stats.FailedLatency {
					fn(sched, d)
				}
			})
			return true
		})
	}
	tl.EachQuery(func(_ int, _, at int64) bool {
		b := bucket(at)
		ts.Seconds[b].Issued += int64(spq)
		lateness.want[b]++
		return true
	})
	eachSample(func(sched int64, d time.Duration) { latency.want[bucket(sched+int64(d))]++ })
	tl.EachQuery(func(_ int, sched, at int64) bool {
		b := bucket(at)
		if p, ok := lateness.add(b, time.Duration(max(at-sched, 0)), 0.99); ok {
			ts.Seconds[b].LatenessP99Ns = p[0]
		}
		return true
	})
	eachSample(func(sched int64, d time.Duration) {
		b := bucket(sched + int64(d))
		ts.Seconds[b].Completed++
		if p, ok := latency.add(b, d, 0.50, 0.99); ok {
			ts.Seconds[b].P50Ns, ts.Seconds[b].P99Ns = p[0], p[1]
		}
	})
	for s, f := range tl.FailedBySecond {
		ts.Seconds[min(s, n-1)].Failed += f
	}
	ts.Seconds[n-1].Failed += res.Unanswered
	return ts, nil
}

// secondValues collects the values of each second and gives a second's
// percentiles once it holds all its values (want, counted beforehand),
// freeing them: what it holds at once is the open seconds' values.
type secondValues struct {
	want []int
	vals [][]time.Duration
}

func newSecondValues(n int) secondValues {
	return secondValues{want: make([]int, n), vals: make([][]time.Duration, n)}
}

// add adds d to second b; when it was b's last value, it returns b's
// percentiles ps and true.
func (v *secondValues) add(b int, d time.Duration, ps ...float64) ([]*int64, bool) {
	if v.vals[b] == nil {
		v.vals[b] = make([]time.Duration, 0, v.want[b])
	}
	v.vals[b] = append(v.vals[b], d)
	if len(v.vals[b]) < v.want[b] {
		return nil, false
	}
	p := percentilesNs(v.vals[b], ps...)
	v.vals[b] = nil
	return p, true
}

// percentilesNs are LoadGen's exact percentiles ps of ds, nil for none.
func percentilesNs(ds []time.Duration, ps ...float64) []*int64 {
	out := make([]*int64, len(ps))
	if len(ds) == 0 {
		return out
	}
	l, err := stats.NewLatencies(ds) // ds are never negative: the error cannot happen
	if err != nil {
		return out
	}
	for i, p := range ps {
		if v, err := l.Percentile(p); err == nil {
			ns := int64(v)
			out[i] = &ns
		}
	}
	return out
}

// WriteCSV writes the series as timeseries.csv: TimeseriesCSVHeader, then a
// row a second, times in ms with 3 decimals, empty cells for no value. With
// stages, the header and each row end with TimeseriesStageColumn: the stage
// the second starts in.
func (ts Timeseries) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := TimeseriesCSVHeader
	if len(ts.Stages) > 0 {
		header += "," + TimeseriesStageColumn
	}
	if _, err := io.WriteString(w, header+"\n"); err != nil {
		return err
	}
	for _, s := range ts.Seconds {
		rec := []string{strconv.Itoa(s.Second), strconv.FormatInt(s.Issued, 10), strconv.FormatInt(s.Completed, 10),
			strconv.FormatInt(s.Failed, 10), msCell(s.P50Ns), msCell(s.P99Ns), msCell(s.LatenessP99Ns)}
		if len(ts.Stages) > 0 {
			rec = append(rec, strconv.Itoa(ts.stageAt(int64(s.Second)*ts.IntervalNs)))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func msCell(ns *int64) string {
	if ns == nil {
		return ""
	}
	return strconv.FormatFloat(float64(*ns)/1e6, 'f', 3, 64)
}

// WriteJSON writes the series as timeseries.json.
func (ts Timeseries) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ts)
}

// ErrMalformedTimeseries: timeseries.json is not one Timeseries object.
var ErrMalformedTimeseries = errors.New("runlog: malformed timeseries.json")

// DecodeTimeseries reads a timeseries.json from r (a run directory's, say
// for a report that reads runs from disk): one Timeseries object, nothing
// after it, that passes Check.
func DecodeTimeseries(r io.Reader) (Timeseries, error) {
	var ts Timeseries
	dec := json.NewDecoder(r)
	if err := dec.Decode(&ts); err != nil {
		return Timeseries{}, fmt.Errorf("%w: %w", ErrMalformedTimeseries, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Timeseries{}, fmt.Errorf("%w: data after the time series object", ErrMalformedTimeseries)
	}
	if err := ts.Check(); err != nil {
		return Timeseries{}, fmt.Errorf("%w: %w", ErrMalformedTimeseries, err)
	}
	return ts, nil
}

// Check refuses a series that would chart nonsense: no positive interval,
// seconds that do not go forward, or a negative count. BuildTimeseries's
// series pass it; a series read from a file or built from another record
// (a report's from latency.hlog) is held to it.
func (ts Timeseries) Check() error {
	if ts.IntervalNs <= 0 {
		return fmt.Errorf("interval_ns %d: want a positive interval", ts.IntervalNs)
	}
	for i, s := range ts.Seconds {
		if i > 0 && s.Second <= ts.Seconds[i-1].Second {
			return fmt.Errorf("seconds[%d]: second %d does not follow %d", i, s.Second, ts.Seconds[i-1].Second)
		}
		if s.Second < 0 || s.Issued < 0 || s.Completed < 0 || s.Failed < 0 {
			return fmt.Errorf("seconds[%d]: a negative second or count", i)
		}
	}
	for i, m := range ts.Stages {
		if m.StartNs < 0 || m.EndNs < m.StartNs || (i > 0 && m.StartNs < ts.Stages[i-1].EndNs) {
			return fmt.Errorf("stages[%d]: span %d..%d ns: want stages one after the other from 0", i, m.StartNs, m.EndNs)
		}
	}
	return nil
}

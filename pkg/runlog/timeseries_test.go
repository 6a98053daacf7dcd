package runlog_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

func ptr(v int64) *int64 { return &v }

// A SingleStream run on the virtual clock with 300 ms per query: query i is
// issued at i·300 ms and answered at (i+1)·300 ms, query 5 fails. Each
// second's counts are worked out by hand; the answer at 3.0 s, the run's
// end, falls in the last second.
func TestTimeseriesBuckets(t *testing.T) {
	c := scenarioCase{ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream,
		latency: constLatency(300 * time.Millisecond),
		fail: func(id int) error {
			if id == 5 {
				return errors.New("HTTP 500")
			}
			return nil
		},
		tweak: func(s *loadgen.Settings) {
			s.MinQueryCount, s.MinDurationMs, s.Engine.EarlyVerdict = 10, 100, false
		}}
	run, res := execute(t, c)
	if res.QueriesIssued != 10 || res.DurationNs != int64(3*time.Second) {
		t.Fatalf("the test's run: %d queries in %v, want 10 in 3s", res.QueriesIssued, time.Duration(res.DurationNs))
	}
	ts, err := runlog.BuildTimeseries(run, res)
	if err != nil {
		t.Fatal(err)
	}
	ms300, zero := ptr(int64(300*time.Millisecond)), ptr(0)
	want := runlog.Timeseries{IntervalNs: int64(time.Second), Seconds: []runlog.Second{
		{Second: 0, Issued: 4, Completed: 3, Failed: 0, P50Ns: ms300, P99Ns: ms300, LatenessP99Ns: zero},
		{Second: 1, Issued: 3, Completed: 2, Failed: 1, P50Ns: ms300, P99Ns: ms300, LatenessP99Ns: zero},
		{Second: 2, Issued: 3, Completed: 4, Failed: 0, P50Ns: ms300, P99Ns: ms300, LatenessP99Ns: zero},
	}}
	if got, w := jsonOf(t, ts), jsonOf(t, want); got != w {
		t.Errorf("time series\n got %s\nwant %s", got, w)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// answer is what a SUT saw of one query and did with it.
type answer struct {
	id                int
	samples           int
	scheduled, issued time.Duration // since the run's start
	at                time.Duration // completion; -1: never answered
	failed            bool
}

// witnessSUT answers like memorySUT, keeping its own record of every
// query's times, and leaves the queries drop picks unanswered.
type witnessSUT struct {
	memorySUT
	start time.Time
	drop  func(id int) bool
	mu    sync.Mutex
	seen  []answer
}

func (s *witnessSUT) IssueQuery(ctx context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	a := answer{id: q.ID, samples: len(q.Samples), scheduled: q.Scheduled.Sub(s.start), issued: q.Issued.Sub(s.start), at: -1}
	if s.drop == nil || !s.drop(q.ID) {
		a.at = a.issued + s.latency(q.ID)
		a.failed = s.fail != nil && s.fail(q.ID) != nil
		s.memorySUT.IssueQuery(ctx, q, done)
	}
	s.mu.Lock()
	s.seen = append(s.seen, a)
	s.mu.Unlock()
}

// expectedSeries is the time series worked out from the SUT's own record,
// with a plain sort for the percentiles.
func expectedSeries(seen []answer, res *loadgen.Result) runlog.Timeseries {
	n := int(max((res.DurationNs+int64(time.Second)-1)/int64(time.Second), 1))
	bucket := func(d time.Duration) int { return min(int(d/time.Second), n-1) }
	ts := runlog.Timeseries{IntervalNs: int64(time.Second), Seconds: make([]runlog.Second, n)}
	lat, late := make([][]int64, n), make([][]int64, n)
	for _, a := range seen {
		b := bucket(a.issued)
		ts.Seconds[b].Issued += int64(a.samples)
		late[b] = append(late[b], int64(a.issued-a.scheduled))
		switch {
		case a.at < 0:
			ts.Seconds[n-1].Failed += int64(a.samples)
		case a.failed:
			ts.Seconds[bucket(a.at)].Failed += int64(a.samples)
		default:
			for range a.samples {
				lat[bucket(a.at)] = append(lat[bucket(a.at)], int64(a.at-a.scheduled))
			}
			ts.Seconds[bucket(a.at)].Completed += int64(a.samples)
		}
	}
	pct := func(v []int64, p float64) *int64 {
		if len(v) == 0 {
			return nil
		}
		slices.Sort(v)
		return ptr(v[min(int(float64(len(v))*p), len(v)-1)])
	}
	for i := range ts.Seconds {
		s := &ts.Seconds[i]
		s.Second = i
		s.P50Ns, s.P99Ns, s.LatenessP99Ns = pct(lat[i], 0.5), pct(lat[i], 0.99), pct(late[i], 0.99)
	}
	return ts
}

// A Server run of several seconds with latencies that vary by query, some
// failures and some queries never answered: the engine-side series equals
// the one computed from what the SUT saw, and its totals equal
// result.json's.
func TestTimeseriesMatchesWhatTheSUTSaw(t *testing.T) {
	clk := newVirtualClock()
	clk.late = 2 * time.Millisecond // issue lateness up to 2 ms: latency counts from the schedule
	sut := &witnessSUT{memorySUT: memorySUT{clock: clk,
		latency: func(id int) time.Duration { return time.Duration(id%97) * 300 * time.Microsecond },
		fail: func(id int) error {
			if id%101 == 3 {
				return errors.New("HTTP 503")
			}
			return nil
		}},
		start: clk.Now(), drop: func(id int) bool { return id%211 == 5 }}
	s := settingsFor(t, scenarioCase{ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server})
	s.ServerTargetQPS, s.MinDurationMs, s.MinQueryCount = 2000, 3500, 100
	s.Engine.EarlyVerdict = false
	s.Engine.DrainTimeoutMs = 50 // the dropped queries end the run after 50 ms of real time
	run, err := loadgen.NewRun(s, sut, memoryQSL{total: 1024, perf: 256}, loadgen.WithClock(clk), loadgen.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.IssueLateness.MaxNs == 0 || res.Unanswered == 0 || res.SamplesFailed <= res.Unanswered || res.DurationNs < int64(3*time.Second) {
		t.Fatalf("the test's run should last over 3 s with failed and unanswered samples: %v, %d failed, %d unanswered",
			time.Duration(res.DurationNs), res.SamplesFailed, res.Unanswered)
	}
	ts, err := runlog.BuildTimeseries(run, res)
	if err != nil {
		t.Fatal(err)
	}
	sut.mu.Lock()
	want := expectedSeries(sut.seen, res)
	sut.mu.Unlock()
	if got, w := jsonOf(t, ts), jsonOf(t, want); got != w {
		t.Errorf("time series\n got %s\nwant %s", got, w)
	}
	checkTotals(t, ts, res)
}

// checkTotals: the seconds add up to result.json's sample counts.
func checkTotals(t *testing.T, ts runlog.Timeseries, res *loadgen.Result) {
	t.Helper()
	var issued, completed, failed int64
	for _, s := range ts.Seconds {
		issued, completed, failed = issued+s.Issued, completed+s.Completed, failed+s.Failed
	}
	if issued != res.SamplesIssued || completed != res.SamplesCompleted || failed != res.SamplesFailed {
		t.Errorf("time series totals issued %d, completed %d, failed %d; result.json %d, %d, %d",
			issued, completed, failed, res.SamplesIssued, res.SamplesCompleted, res.SamplesFailed)
	}
}

// Every scenario's run directory has timeseries.csv and .json whose totals
// equal result.json's, the CSV's header is the contract's, and its rows are
// the JSON's in ms.
func TestTimeseriesFilesAddUpToResult(t *testing.T) {
	spread := func(id int) time.Duration { return time.Duration(200+id%50*40) * time.Microsecond }
	for _, c := range []scenarioCase{
		{name: "Server", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: spread},
		{name: "Offline", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Offline, latency: constLatency(150 * time.Millisecond)},
		{name: "SingleStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream, latency: spread},
		{name: "MultiStream v0.5", ruleset: loadgen.RulesetV05, scenario: trace.MultiStream, latency: spread},
		{name: "Server failing", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: spread,
			fail: func(id int) error {
				if id%7 == 0 {
					return fmt.Errorf("HTTP 500 for query %d", id)
				}
				return nil
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, res := execute(t, c)
			dir := t.TempDir()
			if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatal(err)
			}
			var written loadgen.Result
			if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, runlog.ResultFile))), &written); err != nil {
				t.Fatal(err)
			}
			ts, err := runlog.DecodeTimeseries(strings.NewReader(readFile(t, filepath.Join(dir, runlog.TimeseriesJSONFile))))
			if err != nil {
				t.Fatal(err)
			}
			if built, _ := runlog.BuildTimeseries(run, res); jsonOf(t, built) != jsonOf(t, ts) {
				t.Errorf("timeseries.json is not BuildTimeseries's series")
			}
			if ts.IntervalNs != int64(time.Second) || len(ts.Seconds) == 0 {
				t.Fatalf("timeseries.json: interval %d, %d seconds", ts.IntervalNs, len(ts.Seconds))
			}
			checkTotals(t, ts, &written)
			checkCSV(t, filepath.Join(dir, runlog.TimeseriesCSVFile), ts)
		})
	}
}

func checkCSV(t *testing.T, path string, ts runlog.Timeseries) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], ","); got != "second,issued,completed,failed,p50_ms,p99_ms,lateness_p99_ms" {
		t.Errorf("CSV header %q", got)
	}
	if len(rows) != len(ts.Seconds)+1 {
		t.Fatalf("CSV has %d rows for %d seconds", len(rows)-1, len(ts.Seconds))
	}
	cell := func(v *int64) string {
		if v == nil {
			return ""
		}
		return fmt.Sprintf("%.3f", float64(*v)/1e6)
	}
	for i, s := range ts.Seconds {
		want := []string{fmt.Sprint(s.Second), fmt.Sprint(s.Issued), fmt.Sprint(s.Completed), fmt.Sprint(s.Failed),
			cell(s.P50Ns), cell(s.P99Ns), cell(s.LatenessP99Ns)}
		if !slices.Equal(rows[i+1], want) {
			t.Errorf("CSV row %d = %v, want %v", i+1, rows[i+1], want)
		}
	}
}

func TestDecodeTimeseriesErrors(t *testing.T) {
	for _, in := range []string{``, `[]`, `{"seconds": []}`, `{"interval_ns": "1s"}`,
		`{"interval_ns": 1000000000, "seconds": []} {}`,
		`{"interval_ns": 1000000000, "seconds": [{"second": 2}, {"second": 1}]}`,
		`{"interval_ns": 1000000000, "seconds": [{"second": 0, "failed": -1}]}`,
		`{"interval_ns": 1000000000, "seconds": [{"second": -1}]}`,
		// Stage marks that go back, overlap, or end before they start.
		`{"interval_ns": 1000000000, "seconds": [], "stages": [{"stage": 0, "start_ns": -1, "end_ns": 5}]}`,
		`{"interval_ns": 1000000000, "seconds": [], "stages": [{"stage": 0, "start_ns": 5, "end_ns": 1}]}`,
		`{"interval_ns": 1000000000, "seconds": [], "stages": [{"stage": 0, "start_ns": 0, "end_ns": 5}, {"stage": 1, "start_ns": 4, "end_ns": 9}]}`} {
		if _, err := runlog.DecodeTimeseries(strings.NewReader(in)); !errors.Is(err, runlog.ErrMalformedTimeseries) {
			t.Errorf("%q: %v, want ErrMalformedTimeseries", in, err)
		}
	}
}

package runlog_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
	"github.com/netloadgen/netloadgen/pkg/trace/tracetest"
)

var allFiles = []string{runlog.SummaryFile, runlog.DetailFile, runlog.AccuracyFile, runlog.ResultFile, runlog.HlogFile,
	runlog.TimeseriesCSVFile, runlog.TimeseriesJSONFile, runlog.SamplesFile, runlog.SpectrumFile}

// mllogLine is one detail-log line, field for field; decoding with
// DisallowUnknownFields makes any other key a failure.
type mllogLine struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	TimeMs    float64         `json:"time_ms"`
	Namespace string          `json:"namespace"`
	EventType string          `json:"event_type"`
	Metadata  struct {
		IsError   bool   `json:"is_error"`
		IsWarning bool   `json:"is_warning"`
		File      string `json:"file"`
		LineNo    int    `json:"line_no"`
		PID       int    `json:"pid"`
		TID       int    `json:"tid"`
	} `json:"metadata"`
}

// readDetail parses every line of the detail log strictly.
func readDetail(t *testing.T, dir string) []mllogLine {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, runlog.DetailFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var lines []mllogLine
	for n := 1; sc.Scan(); n++ {
		text, ok := strings.CutPrefix(sc.Text(), ":::MLLOG ")
		if !ok {
			t.Fatalf("detail line %d does not start with \":::MLLOG \": %q", n, sc.Text())
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		var l mllogLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("detail line %d: %v: %s", n, err, text)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			t.Fatalf("detail line %d: trailing data after the JSON object: %s", n, text)
		}
		if !json.Valid(l.Value) {
			t.Fatalf("detail line %d: value is not JSON", n)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatal("empty detail log")
	}
	return lines
}

// detailValue returns the first value logged under key (the checker's rule).
func detailValue(t *testing.T, lines []mllogLine, key string) json.RawMessage {
	t.Helper()
	for _, l := range lines {
		if l.Key == key {
			return l.Value
		}
	}
	t.Fatalf("detail log has no %q", key)
	return nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// summaryValue returns the value of the first summary line "label : value".
func summaryValue(t *testing.T, summary, label string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(label) + `\s*: (.*)$`)
	m := re.FindStringSubmatch(summary)
	if m == nil {
		t.Fatalf("summary has no line %q:\n%s", label, summary)
	}
	return m[1]
}

// checkDirContents asserts dir holds exactly the expected files: every
// log, and no temporary file left behind.
func checkDirContents(t *testing.T, dir string, want []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range entries {
		got[e.Name()] = true
		if strings.HasPrefix(e.Name(), ".") || strings.Contains(e.Name(), "tmp") {
			t.Errorf("leftover temporary file %s", e.Name())
		}
	}
	for _, name := range want {
		if !got[name] {
			t.Errorf("%s not written", name)
		}
		delete(got, name)
	}
	for name := range got {
		t.Errorf("unexpected file %s", name)
	}
}

// readHlog sums the interval histograms of latency.hlog with
// hdrhistogram-go's own log reader.
func readHlog(t *testing.T, dir string) (merged *hdrhistogram.Histogram, intervals int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, runlog.HlogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("hlog: %v", err)
		}
		if h == nil {
			if merged == nil {
				t.Fatal("hlog has no interval")
			}
			return merged, intervals
		}
		intervals++
		if merged == nil {
			merged = h
		} else {
			merged.Merge(h)
		}
	}
}

func resultJSON(t *testing.T, res *loadgen.Result) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func percentileNs(t *testing.T, ls loadgen.LatencyStats, p float64) int64 {
	t.Helper()
	v, ok := ls.At(p)
	if !ok {
		t.Fatalf("result has no %v percentile", p)
	}
	return int64(v)
}

// Each scenario's run writes all five files; the logs agree with the
// engine's result and are machine-readable by the official tools' rules.
func TestWriteScenarios(t *testing.T) {
	// Latencies vary per query so the percentiles differ from each other.
	spread := func(id int) time.Duration { return time.Duration(200+id%97) * time.Microsecond }
	cases := []scenarioCase{
		{name: "Server", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: spread},
		{name: "Offline", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Offline, latency: constLatency(150 * time.Millisecond)},
		{name: "SingleStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream, latency: spread},
		{name: "MultiStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.MultiStream, latency: spread},
		{name: "Server v0.5", ruleset: loadgen.RulesetV05, scenario: trace.Server, latency: spread},
		{name: "MultiStream v0.5", ruleset: loadgen.RulesetV05, scenario: trace.MultiStream, latency: spread},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, res := execute(t, c)
			if !res.Valid {
				t.Fatalf("the test's run should be VALID: %v", res.InvalidReasons)
			}
			dir := t.TempDir()
			if err := runlog.Write(dir, run, res, runlog.Options{TargetURL: "http://127.0.0.1:8000", Model: "resnet", Logger: quietLogger()}); err != nil {
				t.Fatalf("Write: %v", err)
			}
			checkDirContents(t, dir, allFiles)

			summary := readFile(t, filepath.Join(dir, runlog.SummaryFile))
			if !strings.Contains(summary, "\nResult is : VALID\n") {
				t.Errorf("summary is not VALID:\n%s", summary)
			}
			if got := summaryValue(t, summary, "Scenario"); got != c.scenario.String() {
				t.Errorf("summary scenario %q, want %q", got, c.scenario)
			}
			if got := summaryValue(t, summary, "Failed samples"); got != "0" {
				t.Errorf("failed samples %q, want 0", got)
			}
			if got := summaryValue(t, summary, "  target_url"); got != "http://127.0.0.1:8000" {
				t.Errorf("target_url %q", got)
			}
			// MultiStream's summary prints the per-query table only.
			table, label := res.SampleLatency, "99.00 percentile latency (ns)"
			if c.scenario == trace.MultiStream {
				table = res.QueryLatency
			}
			if got, want := summaryValue(t, summary, label), strconv.FormatInt(percentileNs(t, table, 0.99), 10); got != want {
				t.Errorf("summary p99 %s, result p99 %s", got, want)
			}
			if !strings.Contains(summary, "No errors encountered during test.") {
				t.Errorf("a clean run reports errors:\n%s", summary)
			}

			lines := readDetail(t, dir)
			if got := string(detailValue(t, lines, "result_validity")); got != `"VALID"` {
				t.Errorf("result_validity %s", got)
			}
			if got := string(detailValue(t, lines, "num_errors")); got != "0" {
				t.Errorf("num_errors %s", got)
			}
			if got := string(detailValue(t, lines, "result_query_count")); got != strconv.FormatInt(res.QueriesIssued, 10) {
				t.Errorf("result_query_count %s, result %d", got, res.QueriesIssued)
			}
			if got := string(detailValue(t, lines, "effective_scenario")); got != strconv.Quote(c.scenario.String()) {
				t.Errorf("effective_scenario %s", got)
			}
			var loaded []int
			if err := json.Unmarshal(detailValue(t, lines, "loaded_qsl_set"), &loaded); err != nil || len(loaded) != len(res.LoadedSet) {
				t.Errorf("loaded_qsl_set: %d entries (%v), result %d", len(loaded), err, len(res.LoadedSet))
			}
			if lines[0].Key != "loadgen_version" {
				t.Errorf("first detail key %q", lines[0].Key)
			}

			back, err := runlog.Load(dir)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if resultJSON(t, back) != resultJSON(t, res) {
				t.Errorf("result.json does not round-trip:\n%s\n%s", resultJSON(t, back), resultJSON(t, res))
			}

			h, intervals := readHlog(t, dir)
			if h.TotalCount() != res.SamplesCompleted {
				t.Errorf("hlog: %d intervals, %d samples; result has %d completed", intervals, h.TotalCount(), res.SamplesCompleted)
			}
			// HDR keeps 3 significant digits: the max is the exact max's bucket.
			if !h.ValuesAreEquivalent(h.Max(), res.SampleLatency.MaxNs) {
				t.Errorf("hlog max %d ns, result max %d ns", h.Max(), res.SampleLatency.MaxNs)
			}

			acc := readFile(t, filepath.Join(dir, runlog.AccuracyFile))
			var entries []any
			if err := json.Unmarshal([]byte(acc), &entries); err != nil || len(entries) != 0 {
				t.Errorf("accuracy log %q: %v, %d entries", acc, err, len(entries))
			}
		})
	}
}

// A run with failed samples is INVALID everywhere, and every log says how
// many failed and why.
func TestWriteFailedSamples(t *testing.T) {
	cases := []scenarioCase{
		{name: "Server", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server},
		{name: "SingleStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream},
		{name: "Offline", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Offline},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.latency = constLatency(300 * time.Microsecond)
			if c.scenario == trace.Offline {
				c.latency = constLatency(150 * time.Millisecond)
			}
			c.fail = func(id int) error {
				if id%50 == 7 || c.scenario == trace.Offline {
					return fmt.Errorf("HTTP 503 for query %d", id)
				}
				return nil
			}
			run, res := execute(t, c)
			if res.SamplesFailed == 0 || res.Valid {
				t.Fatalf("the test's run should have failed samples: %d failed, valid %v", res.SamplesFailed, res.Valid)
			}
			dir := t.TempDir()
			if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatalf("Write: %v", err)
			}
			checkDirContents(t, dir, allFiles)

			summary := readFile(t, filepath.Join(dir, runlog.SummaryFile))
			if !strings.Contains(summary, "\nResult is : INVALID\n") {
				t.Errorf("summary is not INVALID:\n%s", summary)
			}
			failed := strconv.FormatInt(res.SamplesFailed, 10)
			if got := summaryValue(t, summary, "Failed samples"); got != failed {
				t.Errorf("summary failed samples %q, result %s", got, failed)
			}
			if !strings.Contains(summary, "HTTP 503 for query") {
				t.Errorf("summary lacks the first error:\n%s", summary)
			}
			if !regexp.MustCompile(`(?m)^\d+ ERRORS? encountered`).MatchString(summary) {
				t.Errorf("summary footer reports no error:\n%s", summary)
			}

			lines := readDetail(t, dir)
			if got := string(detailValue(t, lines, "result_validity")); got != `"INVALID"` {
				t.Errorf("result_validity %s", got)
			}
			if got := string(detailValue(t, lines, "netloadgen_failed_samples")); got != failed {
				t.Errorf("netloadgen_failed_samples %s, result %s", got, failed)
			}
			errorLines := 0
			for _, l := range lines {
				if l.Metadata.IsError {
					errorLines++
					if !strings.Contains(string(l.Value), failed+" samples failed") && !strings.Contains(l.Key, "error") {
						t.Errorf("unexpected error line %s %s", l.Key, l.Value)
					}
				}
			}
			if errorLines == 0 || string(detailValue(t, lines, "num_errors")) != strconv.Itoa(errorLines) {
				t.Errorf("%d error lines, num_errors %s", errorLines, detailValue(t, lines, "num_errors"))
			}

			if h, _ := readHlog(t, dir); h.TotalCount() != res.SamplesCompleted {
				t.Errorf("hlog holds %d samples, result has %d completed", h.TotalCount(), res.SamplesCompleted)
			}
		})
	}
}

// The client's resends are in netloadgen's section of the summary, the
// detail log and result.json, 0 included.
func TestWriteRequestsResent(t *testing.T) {
	for _, resent := range []int64{0, 3} {
		run, res := execute(t, scenarioCase{name: "Server", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server,
			latency: constLatency(300 * time.Microsecond)})
		res.RequestsResent = resent
		dir := t.TempDir()
		if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
			t.Fatal(err)
		}
		want := strconv.FormatInt(resent, 10)
		if got := summaryValue(t, readFile(t, filepath.Join(dir, runlog.SummaryFile)), "  requests_resent"); got != want {
			t.Errorf("summary requests_resent %q, want %s", got, want)
		}
		if got := string(detailValue(t, readDetail(t, dir), "netloadgen_requests_resent")); got != `"`+want+`"` {
			t.Errorf("netloadgen_requests_resent %s, want %q", got, want)
		}
		back, err := runlog.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if back.RequestsResent != resent {
			t.Errorf("result.json requests_resent %d, want %d", back.RequestsResent, resent)
		}
	}
}

// Rewriting the logs from result.json alone gives the same LoadGen logs
// as writing them from the run: nothing the logs show is lost in result.json.
func TestWriteFromLoadedResult(t *testing.T) {
	spread := func(id int) time.Duration { return time.Duration(200+id%97) * time.Microsecond }
	for _, c := range []scenarioCase{
		{name: "Server", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: spread},
		{name: "SingleStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream, latency: spread},
		// Too few queries for LoadGen's p99 estimate, which the Result
		// does not keep: it must be rebuilt from the counts alone.
		{name: "SingleStream few queries", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream, latency: constLatency(20 * time.Millisecond),
			tweak: func(s *loadgen.Settings) { s.MinQueryCount = 100 }},
		{name: "MultiStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.MultiStream, latency: spread},
		{name: "Offline", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Offline, latency: constLatency(150 * time.Millisecond)},
		{name: "MultiStream v0.5", ruleset: loadgen.RulesetV05, scenario: trace.MultiStream, latency: spread},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, res := execute(t, c)
			first := t.TempDir()
			if err := runlog.Write(first, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatal(err)
			}
			if c.name == "SingleStream few queries" && !strings.Contains(readFile(t, filepath.Join(first, runlog.SummaryFile)), "Not enough queries processed for 99.0th percentile") {
				t.Fatal("the test's run should have too few queries for the p99 estimate")
			}
			back, err := runlog.Load(first)
			if err != nil {
				t.Fatal(err)
			}
			second := t.TempDir()
			if err := runlog.Write(second, nil, back, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatal(err)
			}
			checkDirContents(t, second, []string{runlog.SummaryFile, runlog.DetailFile, runlog.AccuracyFile, runlog.ResultFile})
			for _, name := range []string{runlog.SummaryFile, runlog.DetailFile, runlog.ResultFile} {
				a, b := readFile(t, filepath.Join(first, name)), readFile(t, filepath.Join(second, name))
				if a != b {
					t.Errorf("%s differs when written from result.json:\n--- from the run\n%s\n--- from result.json\n%s", name, a, b)
				}
			}
		})
	}
}

// The accuracy log: an empty array by default, an existing one kept, a
// given one copied in.
func TestWriteAccuracyLog(t *testing.T) {
	run, res := execute(t, scenarioCase{name: "Offline", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Offline,
		latency: constLatency(150 * time.Millisecond)})
	const written = "[\n{ \"seq_id\" : 0, \"qsl_idx\" : 5, \"data\" : \"FF\" }\n]\n"
	cases := []struct {
		name     string
		existing string // already in the directory
		given    string // Options.AccuracyLogPath content
		want     string
	}{
		{name: "empty by default", want: "[\n]\n"},
		{name: "existing kept", existing: written, want: written},
		{name: "given copied", existing: "[\n]\n", given: written, want: written},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.existing != "" {
				if err := os.WriteFile(filepath.Join(dir, runlog.AccuracyFile), []byte(c.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o := runlog.Options{Logger: quietLogger()}
			if c.given != "" {
				o.AccuracyLogPath = filepath.Join(t.TempDir(), "acc.json")
				if err := os.WriteFile(o.AccuracyLogPath, []byte(c.given), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := runlog.Write(dir, run, res, o); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(dir, runlog.AccuracyFile)); got != c.want {
				t.Errorf("accuracy log %q, want %q", got, c.want)
			}
			checkDirContents(t, dir, allFiles)
		})
	}
	t.Run("given is the destination", func(t *testing.T) {
		dir := t.TempDir()
		dst := filepath.Join(dir, runlog.AccuracyFile)
		if err := os.WriteFile(dst, []byte(written), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := runlog.Write(dir, run, res, runlog.Options{AccuracyLogPath: dst, Logger: quietLogger()}); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, dst); got != written {
			t.Errorf("accuracy log %q", got)
		}
	})
	t.Run("given is missing", func(t *testing.T) {
		err := runlog.Write(t.TempDir(), run, res, runlog.Options{AccuracyLogPath: filepath.Join(t.TempDir(), "none.json"), Logger: quietLogger()})
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Write with a missing accuracy log: %v", err)
		}
	})
}

// Bad input gives an error, never a panic or a partial directory.
func TestWriteRejects(t *testing.T) {
	run, res := execute(t, scenarioCase{name: "SingleStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream,
		latency: constLatency(300 * time.Microsecond)})
	badScenario := *res
	badScenario.Effective.Scenario = "Sideways"
	noES := *res
	noES.EarlyStopping = nil
	noTable := *res
	noTable.QueryLatency.Percentiles = nil

	cases := []struct {
		name string
		res  *loadgen.Result
	}{
		{"nil result", nil},
		{"unknown scenario", &badScenario},
		{"loadgen6 without early stopping", &noES},
		{"latency table without percentiles", &noTable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			err := runlog.Write(dir, run, c.res, runlog.Options{Logger: quietLogger()})
			if !errors.Is(err, runlog.ErrInvalidResult) {
				t.Fatalf("Write: %v, want ErrInvalidResult", err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a rejected result created its directory: %v", err)
			}
		})
	}
	t.Run("dir is a file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := runlog.Write(f, run, res, runlog.Options{Logger: quietLogger()}); err == nil {
			t.Fatal("Write into a regular file succeeded")
		}
	})
}

func TestLoadRejects(t *testing.T) {
	cases := []struct {
		name    string
		content string // "" = no file
		want    error
	}{
		{"missing", "", os.ErrNotExist},
		{"not JSON", "VALID", runlog.ErrMalformedResult},
		{"trailing data", `{"scenario":"Server"} {}`, runlog.ErrMalformedResult},
		{"null", "null", runlog.ErrMalformedResult},
		{"wrong type", `{"scenario": 3}`, runlog.ErrMalformedResult},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.content != "" {
				if err := os.WriteFile(filepath.Join(dir, runlog.ResultFile), []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := runlog.Load(dir); !errors.Is(err, c.want) {
				t.Errorf("Load: %v, want %v", err, c.want)
			}
		})
	}
}

func TestSummaryLine(t *testing.T) {
	spread := func(id int) time.Duration { return time.Duration(200+id%97) * time.Microsecond }
	ms := func(ls loadgen.LatencyStats, p float64) string {
		v, _ := ls.At(p)
		return fmt.Sprintf("%.3f ms", float64(v)/1e6)
	}
	cases := []struct {
		run  scenarioCase
		want func(res *loadgen.Result) []string
	}{
		{
			run: scenarioCase{name: "Server valid", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: spread},
			want: func(res *loadgen.Result) []string {
				return []string{"Server (loadgen6): VALID.",
					fmt.Sprintf("%.2f samples/s completed vs 10000 target QPS", res.CompletedSamplesPerSec),
					"latency p50 " + ms(res.SampleLatency, 0.50), "p90 " + ms(res.SampleLatency, 0.90), "p99 " + ms(res.SampleLatency, 0.99),
					fmt.Sprintf("0 of %d samples failed", res.SamplesIssued),
					"issue lateness p99 " + ms(res.IssueLateness, 0.99)}
			},
		},
		{
			// Enough failures that early stopping fails too: its reason is
			// LoadGen's multi-line text.
			run: scenarioCase{name: "Server with failures", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: spread,
				fail: func(id int) error {
					if id%40 == 3 {
						return errors.New("connection reset")
					}
					return nil
				}},
			want: func(res *loadgen.Result) []string {
				return []string{"Server (loadgen6): INVALID (", "samples failed (first:", "connection reset", "early stopping not met",
					fmt.Sprintf("%d of %d samples failed", res.SamplesFailed, res.SamplesIssued),
					// The answered samples' p99, not the failed ones' INT64_MAX (issue 26 #13).
					"p99 " + ms(*res.SampleLatencyAnswered, 0.99) + " over the " + fmt.Sprint(res.SamplesCompleted) + " answered, " +
						fmt.Sprint(res.SamplesFailed) + " failed"}
			},
		},
		{
			run: scenarioCase{name: "MultiStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.MultiStream, latency: spread},
			want: func(res *loadgen.Result) []string {
				return []string{"MultiStream (loadgen6): VALID.", "query latency p50 " + ms(res.QueryLatency, 0.50)}
			},
		},
		{
			run: scenarioCase{name: "Offline", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Offline, latency: constLatency(150 * time.Millisecond)},
			want: func(res *loadgen.Result) []string {
				return []string{"Offline (loadgen6): VALID.", fmt.Sprintf("%.2f samples/s vs 5000 expected", res.SamplesPerSecond)}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.run.name, func(t *testing.T) {
			_, res := execute(t, c.run)
			line := runlog.SummaryLine(res)
			for _, want := range c.want(res) {
				if !strings.Contains(line, want) {
					t.Errorf("summary line lacks %q:\n%s", want, line)
				}
			}
			if strings.ContainsAny(line, "\n\r") {
				t.Errorf("summary line has a line break: %q", line)
			}
		})
	}
	if got := runlog.SummaryLine(nil); got == "" {
		t.Error("nil result gives an empty line")
	}
}

// A Server run longer than a second is logged in one-second intervals by
// issue time: each holds exactly the samples of the queries the trace
// scheduled in that second; a run stopped early, those it issued.
func TestHlogServerIntervals(t *testing.T) {
	for _, maxQueries := range []uint64{0, 2100} {
		t.Run(fmt.Sprintf("max_query_count %d", maxQueries), func(t *testing.T) {
			hlogServerIntervals(t, maxQueries)
		})
	}
}

func hlogServerIntervals(t *testing.T, maxQueries uint64) {
	run, res := execute(t, scenarioCase{name: "Server", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server,
		latency: constLatency(300 * time.Microsecond),
		tweak: func(s *loadgen.Settings) {
			s.ServerTargetQPS = 500
			s.MinDurationMs = 5500
			s.MaxQueryCount = maxQueries
		}})
	if maxQueries > 0 && res.QueriesIssued != int64(maxQueries) {
		t.Fatalf("%d queries issued, want max_query_count %d", res.QueriesIssued, maxQueries)
	}
	dir := t.TempDir()
	if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	want := map[int64]int64{} // second → samples scheduled in it
	tr := run.Trace()
	for _, q := range tracetest.Collect(tr)[:res.QueriesIssued] {
		want[int64(q.Scheduled/time.Second)] += int64(tr.SamplesPerQuery)
	}
	if len(want) < 4 {
		t.Fatalf("the test's run spans %d seconds, want at least 4", len(want))
	}

	f, err := os.Open(filepath.Join(dir, runlog.HlogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	got := map[int64]int64{}
	// The log's base time is whole seconds (hdrhistogram-go's header
	// format); offsets from the first interval, which starts the run, are
	// exact.
	var origin int64 = -1
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if origin < 0 {
			origin = h.StartTimeMs()
		}
		got[(h.StartTimeMs()-origin)/1000] += h.TotalCount()
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("samples per interval %v, want %v", got, want)
	}
	// The header's count, written before the intervals, is theirs.
	var total int64
	for _, n := range got {
		total += n
	}
	head, err := os.ReadFile(filepath.Join(dir, runlog.HlogFile))
	if err != nil {
		t.Fatal(err)
	}
	if c := fmt.Sprintf("; %d samples completed, 0 failed", total); !strings.Contains(string(head), c) {
		t.Errorf("the header does not say %q:\n%.300s", c, head)
	}
}

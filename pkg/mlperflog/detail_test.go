package mlperflog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// TestDetailLineMatchesReference writes the example line of
// LOADGEN-REFERENCE.md §6.2 and expects it byte for byte.
func TestDetailLineMatchesReference(t *testing.T) {
	const want = `:::MLLOG {"key": "result_validity", "value": "VALID", "time_ms": 10083.670306, "namespace": "mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": {"is_error": false, "is_warning": false, "file": "/…/results.cc", "line_no": 674, "pid": 9505, "tid": 9505}}` + "\n"
	var b bytes.Buffer
	d := NewDetailLog(&b, DetailOptions{File: "/…/results.cc", PID: 9505, TID: 9505})
	if err := d.Write(Event{Key: "result_validity", Value: "VALID", At: 10083670306, Line: 674}); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got  %s\nwant %s", b.String(), want)
	}
}

// detailRecord is one parsed line.
type detailRecord struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	TimeMs    json.Number     `json:"time_ms"`
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

// parseDetail reads a detail log the way the submission checker's parser
// does (LOADGEN-REFERENCE.md §6.5): the first line must start with
// ":::MLLOG", every line is strict JSON after the marker, and a key lookup
// returns its first occurrence. Unknown fields and trailing data fail.
func parseDetail(t *testing.T, text string) (records []detailRecord, first map[string]json.RawMessage) {
	t.Helper()
	first = map[string]json.RawMessage{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 0; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, ":::MLLOG") {
			t.Fatalf("line %d does not start with :::MLLOG: %q", n+1, line)
		}
		dec := json.NewDecoder(strings.NewReader(strings.TrimPrefix(line, ":::MLLOG")))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		var r detailRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %d is not strict JSON: %v\n%s", n+1, err, line)
		}
		if _, err := dec.Token(); err != io.EOF {
			t.Fatalf("line %d has trailing data: %q", n+1, line)
		}
		if !json.Valid(r.Value) {
			t.Fatalf("line %d value invalid", n+1)
		}
		records = append(records, r)
		if _, ok := first[r.Key]; !ok {
			first[r.Key] = r.Value
		}
	}
	if len(records) == 0 {
		t.Fatal("empty detail log")
	}
	return records, first
}

func TestDetailTimeFormat(t *testing.T) {
	tests := []struct {
		at   time.Duration
		want string
	}{
		{0, "0.000000"},
		{1, "0.000001"},
		{999999, "0.999999"},
		{time.Millisecond, "1.000000"},
		{10083670306, "10083.670306"},
		{time.Hour + 7, "3600000.000007"},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		if err := NewDetailLog(&b, DetailOptions{}).Log(tc.at, "k", 1); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), `"time_ms": `+tc.want+`, `) {
			t.Errorf("at %d: %s, want time_ms %s", tc.at, b.String(), tc.want)
		}
	}
}

func TestDetailValues(t *testing.T) {
	tests := []struct {
		name  string
		value any
		want  string // the raw JSON value as written
	}{
		{"string", "Starting performance mode", `"Starting performance mode"`},
		{"escaped string", "a\"b\\c\nd\te\x01", `"a\"b\\c\nd\te\u0001"`},
		{"invalid utf8", "ok\xffok", `"ok` + "\ufffd" + `ok"`},
		{"bool", true, `true`},
		{"int", -3, `-3`},
		{"uint64 seed", uint64(16159082839903944936), `16159082839903944936`},
		{"duration", 1500 * time.Microsecond, `1500000`},
		{"double whole", 1000.0, `1000`},
		{"double 6 digits", 24333333.3, `2.43333e+07`},
		{"double fraction", 0.99, `0.99`},
		{"nan", math.NaN(), `"nan"`},
		{"inf", math.Inf(1), `"inf"`},
		{"-inf", math.Inf(-1), `"-inf"`},
		{"vector", []int{545, 3, 12}, `[545,3,12]`},
		{"empty vector", []int{}, `[]`},
		{"strings", []string{"a", "b\"c"}, `["a","b\"c"]`},
		{"map sorted", map[string]string{"z.cc": "1", "a.cc": "2"}, `{"a.cc":"2","z.cc":"1"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := NewDetailLog(&b, DetailOptions{}).Log(0, "k", tc.value); err != nil {
				t.Fatal(err)
			}
			line := b.String()
			if !strings.HasPrefix(line, `:::MLLOG {"key": "k", "value": `+tc.want+`, "time_ms"`) {
				t.Errorf("got %s, want value %s", line, tc.want)
			}
			parseDetail(t, line)
		})
	}
}

func TestDetailRejectsBadEvents(t *testing.T) {
	var b bytes.Buffer
	d := NewDetailLog(&b, DetailOptions{})
	if err := d.Log(0, "", 1); !errors.Is(err, ErrInvalidEvent) {
		t.Errorf("empty key: %v", err)
	}
	if err := d.Log(-1, "k", 1); !errors.Is(err, ErrInvalidEvent) {
		t.Errorf("negative time: %v", err)
	}
	if err := d.Log(0, "k", struct{}{}); !errors.Is(err, ErrUnsupportedValue) {
		t.Errorf("struct value: %v", err)
	}
	if err := d.Log(0, "k", []float64{1}); !errors.Is(err, ErrUnsupportedValue) {
		t.Errorf("float slice value: %v", err)
	}
	if b.Len() != 0 {
		t.Errorf("bad events wrote %q", b.String())
	}
}

type failWriter struct{ n int }

var errDisk = errors.New("disk full")

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errDisk
	}
	f.n--
	return len(p), nil
}

func TestDetailWriteErrorIsSticky(t *testing.T) {
	d := NewDetailLog(&failWriter{n: 1}, DetailOptions{})
	if err := d.Log(0, "a", 1); err != nil {
		t.Fatal(err)
	}
	if err := d.Log(0, "b", 1); !errors.Is(err, errDisk) {
		t.Fatalf("second write: %v", err)
	}
	if err := d.Log(0, "c", 1); !errors.Is(err, errDisk) {
		t.Fatalf("third write: %v", err)
	}
}

func TestDetailErrorAndWarningCounts(t *testing.T) {
	var b bytes.Buffer
	d := NewDetailLog(&b, DetailOptions{})
	must(t, d.Warning(0, "warning_generic_message", "Found Audit Config file (audit.config)."))
	must(t, d.Error(1, "error_runtime", "ran out of generated queries"))
	must(t, d.Error(2, "error_runtime", "too many outstanding queries"))
	must(t, d.Log(3, "num_errors", d.Errors()))
	recs, first := parseDetail(t, b.String())
	if d.Errors() != 2 || d.Warnings() != 1 {
		t.Errorf("Errors() = %d, Warnings() = %d, want 2, 1", d.Errors(), d.Warnings())
	}
	flagged := 0
	for _, r := range recs {
		if r.Metadata.IsError {
			flagged++
		}
	}
	if flagged != 2 || !recs[0].Metadata.IsWarning || recs[0].Metadata.IsError {
		t.Errorf("flags wrong: %+v", recs)
	}
	if string(first["num_errors"]) != "2" {
		t.Errorf("num_errors = %s", first["num_errors"])
	}
}

func TestDetailConcurrentWriters(t *testing.T) {
	var b bytes.Buffer
	d := NewDetailLog(&b, DetailOptions{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if err := d.Log(time.Duration(i), "generic_message", strings.Repeat("x", g+i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	recs, _ := parseDetail(t, b.String())
	if len(recs) != 400 {
		t.Errorf("%d lines, want 400", len(recs))
	}
}

// checkerKeys are the detail-log keys the submission checker reads
// (LOADGEN-REFERENCE.md §6.5), common to every scenario.
// requested_use_token_latencies is not among them: LoadGen writes it only
// with token latencies on, and the checker reads it only for LLMs, which
// must have them on.
var checkerKeys = []string{
	"effective_scenario", "effective_samples_per_query", "effective_performance_sample_count",
	"effective_qsl_rng_seed", "effective_sample_index_rng_seed", "effective_schedule_rng_seed",
	"effective_min_duration_ms", "effective_min_query_count", "effective_sample_concatenate_permutation",
	"effective_target_latency_ns", "effective_accuracy_sample_count", "qsl_reported_total_count",
	"early_stopping_met", "early_stopping_result", "result_validity",
	"result_99.00_percentile_latency_ns", "result_mean_latency_ns", "result_query_count",
	"sut_name", "power_begin", "power_end", "num_errors",
}

// resultFieldNew is the checker's RESULT_FIELD_NEW plus the per-scenario keys
// it reads (§6.5).
var resultFieldNew = map[trace.Scenario][]string{
	trace.Offline:      {"result_samples_per_second"},
	trace.SingleStream: {"early_stopping_latency_ss", "result_qps_without_loadgen_overhead"},
	trace.MultiStream:  {"early_stopping_latency_ms", "result_99.00_percentile_per_query_latency_ns", "result_mean_query_latency_ns"},
	trace.Server:       {"result_completed_samples_per_sec"},
}

// writeStandardRun writes a whole run's detail log through the helpers.
func writeStandardRun(t *testing.T, s *Summary, req *Requested) string {
	t.Helper()
	var b bytes.Buffer
	d := NewDetailLog(&b, DetailOptions{PID: 42, TID: 42})
	wall := time.Date(2025, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	must(t, d.LogVersion(0, Version{LoadgenVersion: "netloadgen dev (LoadGen 6.0.17 logs)", FileSHA1: map[string]string{"x.go": "ab"}}))
	must(t, d.LogIdentity(1000, Identity{TestDatetime: wall, SUTName: s.SUTName, GetSUTNameDuration: 1234,
		QSLName: "synthetic", QSLTotalCount: 1024, QSLPerformanceCount: 1024}))
	must(t, d.LogRequestedSettings(2000, req))
	must(t, d.LogEffectiveSettings(3000, &s.Settings))
	must(t, d.LogModeStart(4000, s.Settings.Mode))
	must(t, d.LogLoadedSet(5000, []int{545, 3, 12}))
	must(t, d.LogGenerated(6000, 10034, 1, 10*time.Second))
	must(t, d.LogLoggerCounters(7000))
	must(t, d.LogPowerBegin(7000, wall))
	must(t, d.LogPowerEnd(8000, wall.Add(10*time.Second)))
	must(t, d.LogResults(9000, s))
	return b.String()
}

func TestDetailStandardRunHasCheckerKeys(t *testing.T) {
	ss := func(t *testing.T) *Summary {
		return &Summary{
			SUTName:  "Demo Network SUT",
			Settings: effective(t, func(s *trace.Requested) { s.Scenario = trace.SingleStream }),
			EarlyStopping: EarlyStopping{
				Estimate:   &stats.PercentileEstimate{Met: true, Queries: 9331, MinQueries: 64, Discarded: 864, Latency: 1076145},
				Estimate99: &stats.PercentileEstimate{Met: true, Queries: 9331, MinQueries: 662, Discarded: 60, Latency: 1113508},
			},
			MinDurationMet: true, MinQueriesMet: true,
		}
	}
	ms := func(t *testing.T) *Summary {
		return &Summary{
			SUTName:       "Demo Network SUT",
			Settings:      effective(t, func(s *trace.Requested) { s.Scenario = trace.MultiStream }),
			EarlyStopping: EarlyStopping{Estimate: &stats.PercentileEstimate{Queries: 10, MinQueries: 662}},
		}
	}
	off := func(t *testing.T) *Summary {
		return &Summary{
			SUTName:          "Demo Network SUT",
			Settings:         effective(t, func(s *trace.Requested) { s.Scenario = trace.Offline }),
			SamplesPerSecond: math.Inf(1), MinDurationMet: true, MinQueriesMet: true,
		}
	}
	srv := func(t *testing.T) *Summary {
		s := referenceServerSummary(t)
		s.SUTName = "Demo Network SUT"
		s.Network = Network{Ruleset: "loadgen6", FailedSamples: 2, FirstErrors: []string{"HTTP 503"},
			IssueLateness: &LatencyStats{Max: 5}, Constraints: []Constraint{{Name: "c", Met: true}},
			Extra: []Field{{Key: "protocol", Value: "grpc"}}}
		return s
	}
	tests := []struct {
		name      string
		s         func(*testing.T) *Summary
		validity  string
		invalidRe string // expected result_invalid_reason ("" = absent)
		esResult  string
	}{
		{"SingleStream", ss, "VALID", "", " * Processed at least 64 queries (9331).  * Would discard 864 highest latency queries.  * Early stopping 90.0th percentile estimate: 1076145  * Early stopping 99.0th percentile estimate: 1113508"},
		{"MultiStream", ms, "INVALID", "Decrease the expected latency so the loadgen pre-generates more queries. The test exited early, before enough queries were issued.", " * Only processed 10 queries.  * Need to process at least 662 queries for early stopping."},
		{"Offline", off, "VALID", "", ""},
		{"Server with failed samples", srv, "INVALID", "netloadgen: 2 samples failed (network or server errors); a run with failed samples is invalid.", " * Run successful."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s(t)
			req := &Requested{Requested: trace.DefaultSettings(), Mode: trace.PerformanceOnly}
			req.Scenario = s.Settings.Scenario
			text := writeStandardRun(t, s, req)
			recs, first := parseDetail(t, text)
			for _, k := range append(append([]string{}, checkerKeys...), resultFieldNew[s.Settings.Scenario]...) {
				if _, ok := first[k]; !ok {
					t.Errorf("key %s missing", k)
				}
			}
			seen := map[string]bool{}
			for _, r := range recs {
				if seen[r.Key] {
					t.Errorf("key %s logged twice", r.Key)
				}
				seen[r.Key] = true
				if r.Namespace != "mlperf::logging" || r.EventType != "POINT_IN_TIME" || r.Metadata.PID != 42 {
					t.Errorf("line %s: envelope %+v", r.Key, r)
				}
			}
			str := func(k string) string {
				var v string
				if err := json.Unmarshal(first[k], &v); err != nil {
					t.Fatalf("%s = %s: %v", k, first[k], err)
				}
				return v
			}
			if got := str("result_validity"); got != tc.validity {
				t.Errorf("result_validity = %q, want %q", got, tc.validity)
			}
			if got := str("effective_scenario"); got != s.Settings.Scenario.String() {
				t.Errorf("effective_scenario = %q", got)
			}
			if got := str("sut_name"); !strings.Contains(got, "Network SUT") {
				t.Errorf("sut_name = %q lacks Network SUT", got)
			}
			if got := str("power_begin"); got != "03-04-2025 05:06:07.891" {
				t.Errorf("power_begin = %q", got)
			}
			if got := str("test_datetime"); got != "2025-03-04T05:06:07Z" {
				t.Errorf("test_datetime = %q", got)
			}
			if string(first["effective_qsl_rng_seed"]) != "2085463073848966840" ||
				string(first["effective_schedule_rng_seed"]) != "16159082839903944936" {
				t.Errorf("seeds %s %s", first["effective_qsl_rng_seed"], first["effective_schedule_rng_seed"])
			}
			if string(first["loaded_qsl_set"]) != "[545,3,12]" {
				t.Errorf("loaded_qsl_set = %s", first["loaded_qsl_set"])
			}
			if tc.invalidRe == "" {
				if _, ok := first["result_invalid_reason"]; ok {
					t.Errorf("result_invalid_reason present on a valid run")
				}
			} else if got := str("result_invalid_reason"); got != tc.invalidRe {
				t.Errorf("result_invalid_reason = %q, want %q", got, tc.invalidRe)
			}
			if got := str("early_stopping_result"); got != tc.esResult {
				t.Errorf("early_stopping_result = %q, want %q", got, tc.esResult)
			}
			// LoadGen's keys end with num_errors; ours follow it.
			var i int
			for i = range recs {
				if recs[i].Key == "num_errors" {
					break
				}
			}
			for _, r := range recs[i+1:] {
				if !strings.HasPrefix(r.Key, "netloadgen_") {
					t.Errorf("key %s after num_errors", r.Key)
				}
			}
			if i == len(recs)-1 || recs[i+1].Key != "netloadgen_ruleset" && recs[i+1].Key != "netloadgen_failed_samples" {
				t.Errorf("netloadgen keys missing after num_errors")
			}
		})
	}
}

func TestDetailResultsRejectBadSummary(t *testing.T) {
	var b bytes.Buffer
	d := NewDetailLog(&b, DetailOptions{})
	if err := d.LogResults(0, nil); !errors.Is(err, ErrInvalidSummary) {
		t.Errorf("nil summary: %v", err)
	}
	if err := d.LogRequestedSettings(0, nil); !errors.Is(err, ErrInvalidEvent) {
		t.Errorf("nil requested: %v", err)
	}
	if err := d.LogEffectiveSettings(0, nil); !errors.Is(err, ErrInvalidEvent) {
		t.Errorf("nil settings: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package runlog_test

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// detailMap reads a detail log's keys and values, as written.
func detailMap(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(readFile(t, path)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(sc.Text(), ":::MLLOG ")), &e); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		out[e.Key] = string(e.Value)
	}
	return out
}

// containsRun reports whether want appears in got as consecutive lines.
func containsRun(got, want []string) bool {
	for i := range got {
		if i+len(want) <= len(got) && slices.Equal(got[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// TestSingleStreamTokenLatenciesAsLoadGen: a SingleStream sample list with
// use_token_latencies, judged and logged as LoadGen 6.0.17 does
// (results.cc, PerformanceSummary): the expected lines are worked out here
// from its source, not from the engine.
//
// 100 samples, i = 0..99: TTFT (i+1) ms, TPOT 2 ms + i µs over 10 more
// tokens (11 tokens, latency 21 ms + 1.01 ms·i), but sample 5 reports 1
// token: LoadGen counts it 0 tokens (and an error_runtime), so its TPOT is
// (latency − TTFT)/(0 − 1) = −20.05 ms (logging.cc; ProcessTokenLatencies).
// Tokens: 99 × 11 = 1089. Final issue at 10 s, last completion at 10.2 s.
//
//   - LogSummary's head: the 90.0th percentile latency (sorted[90]) and,
//     for SingleStream, "90.0th first token percentile latency (ns) : "
//     TTFT sorted[90] = 91 ms (token_target_latency_percentile is the
//     scenario's target_latency_percentile, results.h).
//   - No performance constraint (HasPerfConstraints and PerfConstraintsMet
//     are Server's): the verdict is min duration, min queries and
//     EarlyStopping(TPOT) && EarlyStopping(TTFT). SingleStream's
//     EarlyStopping estimates the array it is given: at p90 over 100
//     queries it needs 64 and discards 2 (t = 3), so the estimate is
//     sorted[97] (TPOT 2.097 ms, TTFT 98 ms); p99 needs 662 queries.
//   - Additional Stats: QPS lines, the sample table, then "", "TPS w/
//     loadgen overhead" = tokens / final issued time = 108.90, "TPS w/o" =
//     tokens / (mean latency s × samples) = 1089 / (0.070995 × 100) =
//     153.39, the first-token table, "", the TPOT table.
//   - LogDetail: no result_perf_constraints_met, the two early-stopping
//     texts one-lined, early_stopping_latency_ss = the last estimate made
//     (TTFT's), early_stopping_latency_ms 0 (no p99 estimate), and the
//     token keys Server has (they are every scenario's but Offline's).
func TestSingleStreamTokenLatenciesAsLoadGen(t *testing.T) {
	s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	s.Scenario, s.UseTokenLatencies = trace.SingleStream, true
	s.MinDurationMs, s.MinQueryCount = 5000, 100
	rec := loadgen.Recorded{SUTName: "tok", QSLTotalSampleCount: 100, QSLPerformanceSampleCount: 100, QueriesIssued: 100,
		FinalQueryScheduledTimeNs: 10_000_000_000, FinalQueryIssuedTimeNs: 10_000_000_000, FinalQueryAllSamplesDoneTimeNs: 10_200_000_000}
	for i := range int64(100) {
		ttft, tpot, n := (i+1)*1_000_000, 2_000_000+1000*i, int64(11)
		if i == 5 {
			n = 1
		}
		rec.Samples = append(rec.Samples, loadgen.TokenSample{LatencyNs: ttft + 10*tpot, FirstTokenNs: ttft, Tokens: n})
	}
	res, err := loadgen.Rejudge(s, rec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := runlog.Write(dir, nil, res, runlog.Options{Rejudged: true, Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	sum := strings.Split(readFile(t, filepath.Join(dir, runlog.SummaryFile)), "\n")
	for _, want := range [][]string{
		{"Mode     : PerformanceOnly",
			"90.0th percentile latency (ns) : 111900000",
			"90.0th first token percentile latency (ns) : 91000000",
			"Result is : VALID",
			"  Min duration satisfied : Yes",
			"  Min queries satisfied : Yes",
			"  Early stopping satisfied: Yes",
			"TTFT Early Stopping Result:",
			" * Processed at least 64 queries (100).",
			" * Would discard 2 highest latency queries.",
			" * Early stopping 90.0th percentile estimate: 98000000",
			" * Not enough queries processed for 99.0th percentile",
			" early stopping estimate (would need to process at",
			" least 662 total queries).",
			"TPOT Early Stopping Result:",
			" * Processed at least 64 queries (100).",
			" * Would discard 2 highest latency queries.",
			" * Early stopping 90.0th percentile estimate: 2097000",
			" * Not enough queries processed for 99.0th percentile",
			" early stopping estimate (would need to process at",
			" least 662 total queries).",
			""},
		{"QPS w/ loadgen overhead         : 9.90",
			"QPS w/o loadgen overhead        : 14.09",
			"",
			"Min latency (ns)                : 21000000"},
		{"99.90 percentile latency (ns)   : 120990000",
			"",
			"TPS w/ loadgen overhead         : 108.90",
			"TPS w/o loadgen overhead        : 153.39",
			"Min First Token latency (ns)                : 1000000",
			"Max First Token latency (ns)                : 100000000",
			"Mean First Token latency (ns)               : 50500000",
			"50.00 percentile first token latency (ns)   : 51000000",
			"90.00 percentile first token latency (ns)   : 91000000",
			"95.00 percentile first token latency (ns)   : 96000000",
			"97.00 percentile first token latency (ns)   : 98000000",
			"99.00 percentile first token latency (ns)   : 100000000",
			"99.90 percentile first token latency (ns)   : 100000000",
			"",
			"Min Time per Output Token (ns)                : -20050000",
			"Max Time per Output Token (ns)                : 2099000",
			"Mean Time per Output Token (ns)               : 1828950",
			"50.00 percentile time to output token (ns)   : 2050000",
			"90.00 percentile time to output token (ns)   : 2090000",
			"95.00 percentile time to output token (ns)   : 2095000",
			"97.00 percentile time to output token (ns)   : 2097000",
			"99.00 percentile time to output token (ns)   : 2099000",
			"99.90 percentile time to output token (ns)   : 2099000",
			"",
			"================================================",
			"Test Parameters Used"},
	} {
		if !containsRun(sum, want) {
			t.Errorf("summary lacks, as consecutive lines:\n%s\n--- summary:\n%s", strings.Join(want, "\n"), strings.Join(sum, "\n"))
		}
	}
	if slices.ContainsFunc(sum, func(l string) bool { return strings.Contains(l, "Performance constraints") }) {
		t.Error("a SingleStream summary has a performance-constraints line")
	}

	d := detailMap(t, filepath.Join(dir, runlog.DetailFile))
	if _, ok := d["result_perf_constraints_met"]; ok {
		t.Error("detail log has result_perf_constraints_met")
	}
	for k, want := range map[string]string{
		"result_validity":                                  `"VALID"`,
		"early_stopping_met":                               "true",
		"early_stopping_ttft_result":                       `" * Processed at least 64 queries (100).  * Would discard 2 highest latency queries.  * Early stopping 90.0th percentile estimate: 98000000  * Not enough queries processed for 99.0th percentile  early stopping estimate (would need to process at  least 662 total queries)."`,
		"early_stopping_tpot_result":                       `" * Processed at least 64 queries (100).  * Would discard 2 highest latency queries.  * Early stopping 90.0th percentile estimate: 2097000  * Not enough queries processed for 99.0th percentile  early stopping estimate (would need to process at  least 662 total queries)."`,
		"early_stopping_latency_ss":                        "98000000",
		"early_stopping_latency_ms":                        "0",
		"result_first_token_min_latency_ns":                "1000000",
		"result_first_token_mean_latency_ns":               "50500000",
		"result_first_token_90.00_percentile_latency_ns":   "91000000",
		"result_time_per_output_token_99.00_percentile_ns": "2099000",
		"result_time_to_output_token_min":                  "-20050000",
		"result_time_to_output_token_mean":                 "1828950",
		"num_errors":                                       "1",
	} {
		if d[k] != want {
			t.Errorf("detail %s = %s, want %s", k, d[k], want)
		}
	}
	for k, want := range map[string]float64{
		"result_token_throughput_with_loadgen_overhead": 1089 / 10.0,
		"result_token_throughput":                       1089 / (70_995_000.0 * 100),
		"result_completed_tokens_per_second":            1089 / 10.2,
	} {
		if f, err := strconv.ParseFloat(d[k], 64); err != nil || f < want*(1-1e-5) || f > want*(1+1e-5) {
			t.Errorf("detail %s = %s, want %.6g", k, d[k], want)
		}
	}
}

// TestMultiStreamTokenLatenciesAsLoadGen: in MultiStream LoadGen 6.0.17
// passes the query latencies to both early-stopping calls (results.cc
// LogSummary and LogDetail: EarlyStopping(..., &pr.query_latencies, ...)
// reads query_latencies in its MultiStream case whatever array it is
// given), so with token latencies the TTFT and TPOT blocks are the block
// the same run has without them, and early_stopping_latency_ms its
// estimate. The head adds "99.0th first token percentile latency (ns)";
// Additional Stats add, after the per-query table (MultiStream prints no
// per-sample one), "" and the first-token and TPOT tables, with no token
// rate line (that is SingleStream's and Server's). Too few queries: TPOT's
// block says so and TTFT's is empty, for LoadGen's && does not call it.
func TestMultiStreamTokenLatenciesAsLoadGen(t *testing.T) {
	write := func(queries int64, tokens bool) (sum []string, d map[string]string) {
		s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
		s.Scenario, s.UseTokenLatencies = trace.MultiStream, tokens
		s.MinDurationMs, s.MinQueryCount = 1000, 1
		rec := loadgen.Recorded{SUTName: "tok", QSLTotalSampleCount: 1024, QSLPerformanceSampleCount: 1024, QueriesIssued: queries,
			FinalQueryScheduledTimeNs: 20_000_000_000, FinalQueryIssuedTimeNs: 20_000_000_000, FinalQueryAllSamplesDoneTimeNs: 20_050_000_000}
		for q := range queries {
			for k := range int64(8) {
				lat := 10_000_000 + (q*37%101)*100_000 + k*1000
				rec.Samples = append(rec.Samples, loadgen.TokenSample{LatencyNs: lat, FirstTokenNs: lat / 4, Tokens: 16})
			}
		}
		res, err := loadgen.Rejudge(s, rec)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := runlog.Write(dir, nil, res, runlog.Options{Rejudged: true, Logger: quietLogger()}); err != nil {
			t.Fatal(err)
		}
		return strings.Split(readFile(t, filepath.Join(dir, runlog.SummaryFile)), "\n"), detailMap(t, filepath.Join(dir, runlog.DetailFile))
	}
	block := func(sum []string, title string) []string {
		i := slices.Index(sum, title)
		if i < 0 {
			t.Fatalf("summary lacks %q:\n%s", title, strings.Join(sum, "\n"))
		}
		j := i + 1
		for j < len(sum) && strings.HasPrefix(sum[j], " ") {
			j++
		}
		return sum[i+1 : j]
	}

	plain, plainD := write(700, false)
	sum, d := write(700, true)
	es := block(plain, "Early Stopping Result:")
	if len(es) != 3 || !slices.Equal(block(sum, "TTFT Early Stopping Result:"), es) || !slices.Equal(block(sum, "TPOT Early Stopping Result:"), es) {
		t.Errorf("token blocks %q and %q, want the query-latency block %q both times",
			block(sum, "TTFT Early Stopping Result:"), block(sum, "TPOT Early Stopping Result:"), es)
	}
	if d["early_stopping_latency_ms"] != plainD["early_stopping_latency_ms"] || d["early_stopping_ttft_result"] != plainD["early_stopping_result"] ||
		d["early_stopping_tpot_result"] != plainD["early_stopping_result"] || d["early_stopping_met"] != "true" {
		t.Errorf("detail: latency_ms %s, ttft %s, tpot %s, met %s; want %s and %s twice, met",
			d["early_stopping_latency_ms"], d["early_stopping_ttft_result"], d["early_stopping_tpot_result"], d["early_stopping_met"],
			plainD["early_stopping_latency_ms"], plainD["early_stopping_result"])
	}
	head := slices.IndexFunc(sum, func(l string) bool { return strings.HasPrefix(l, "99.0th percentile latency (ns) : ") })
	if head < 0 || !strings.HasPrefix(sum[head+1], "99.0th first token percentile latency (ns) : ") || sum[head+2] != "Result is : VALID" {
		t.Errorf("head lines: %q", sum[max(head, 0):max(head, 0)+3])
	}
	i := slices.Index(sum, "Per-query latency:  ")
	if i < 0 || sum[i+10] != "" || !strings.HasPrefix(sum[i+11], "Min First Token latency (ns)") ||
		sum[i+20] != "" || !strings.HasPrefix(sum[i+21], "Min Time per Output Token (ns)") {
		t.Errorf("Additional Stats from the per-query table:\n%s", strings.Join(sum[max(i, 0):], "\n"))
	}
	if _, ok := d["result_first_token_99.00_percentile_latency_ns"]; !ok {
		t.Error("detail lacks the first-token keys")
	}

	short, shortD := write(100, true)
	if got := block(short, "TTFT Early Stopping Result:"); len(got) != 0 {
		t.Errorf("TTFT block %q, want none: TPOT failed first", got)
	}
	want := []string{" * Only processed 100 queries.", " * Need to process at least 662 queries for early stopping."}
	if got := block(short, "TPOT Early Stopping Result:"); !slices.Equal(got, want) || !slices.Contains(short, "Result is : INVALID") ||
		shortD["early_stopping_ttft_result"] != `""` || shortD["early_stopping_latency_ms"] != "0" {
		t.Errorf("TPOT block %q (want %q), INVALID %v, detail ttft %s latency_ms %s", got, want,
			slices.Contains(short, "Result is : INVALID"), shortD["early_stopping_ttft_result"], shortD["early_stopping_latency_ms"])
	}
}

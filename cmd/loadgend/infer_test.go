package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// TestRejudgeInfersTokens: infer_token_latencies on LoadGen 6.0.17's token
// vectors. The expected figures follow results.cc, PerformanceSummary::
// LogSummary and LogDetail, their infer_token_latencies blocks:
//   - Server: token_latency_scaling_factor × (sample_count − 1) /
//     final_query_all_samples_done_time, in the summary as "Completed
//     tokens per second (inferred): " through DoubleToString (2 decimals),
//     in the detail log as result_inferred_completed_tokens_per_second;
//   - Offline: factor × sample_count / max_latency, "Tokens per second
//     (inferred): " in the stream's default format (6 significant digits),
//     and result_inferred_tokens_per_second;
//   - both after the token lines (the summary's head, the detail log's
//     token keys) and before the verdict and num_errors; nothing else moves.
//
// The counts and times are the vectors' own (their input headers): 1999
// samples done at 603.331685454 s, 2000 samples with a max latency of
// 676.445226458 s.
func TestRejudgeInfersTokens(t *testing.T) {
	for _, tc := range []struct {
		name, after, line, key string
		want                   float64
	}{
		{"token_server_small", "Completed tokens per second: 536.54", "Completed tokens per second (inferred): " + fmt.Sprintf("%.2f", 69*1998/603.331685454),
			"result_inferred_completed_tokens_per_second", 69 * 1998 / 603.331685454},
		{"token_offline_small", "Tokens per second: 470.616", "Tokens per second (inferred): 204.008",
			"result_inferred_tokens_per_second", 69 * 2000 / 676.445226458},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(srcDir, "testdata", "tokens", tc.name)
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			args := []string{"rejudge", "--samples", in + ".input.txt", "--out", out, "--infer-token-latencies", "--token-latency-scaling-factor", "69"}
			if code := run(args, &stdout, &stderr); code != exitValid {
				t.Fatalf("exit %d, want VALID; stderr: %s", code, stderr.String())
			}
			got := loadgenSummary(t, filepath.Join(out, runlog.SummaryFile))
			want := loadgenSummary(t, in+".mlperf_log_summary.txt")
			at := slices.Index(want, tc.after) + 1
			if at == 0 {
				t.Fatalf("vector lacks %q", tc.after)
			}
			diffLines(t, "summary", got, slices.Insert(want, at, tc.line))

			keys := judgedKeys(t, filepath.Join(out, runlog.DetailFile))
			wantKeys := judgedKeys(t, in+".mlperf_log_detail.txt")
			n := len(wantKeys) - 1 // num_errors is last
			if !strings.HasPrefix(wantKeys[n], "num_errors") || len(keys) != len(wantKeys)+1 {
				t.Fatalf("detail keys: %d, want the vector's %d and one", len(keys), len(wantKeys))
			}
			diffLines(t, "detail", slices.Delete(slices.Clone(keys), n, n+1), wantKeys)
			k, v, _ := strings.Cut(keys[n], " = ")
			f, err := strconv.ParseFloat(v, 64)
			if k != tc.key || err != nil || math.Abs(f-tc.want) > 1e-5*tc.want {
				t.Errorf("detail before num_errors: %s = %s, want %s = %.6g", k, v, tc.key, tc.want)
			}

			var res loadgen.Result
			b, err := os.ReadFile(filepath.Join(out, runlog.ResultFile))
			if err == nil {
				err = json.Unmarshal(b, &res)
			}
			if err != nil {
				t.Fatal(err)
			}
			it := res.InferredTokens
			if it == nil || it.ScalingFactor != 69 || math.Abs(it.CompletedTokensPerSecond+it.TokensPerSecond-tc.want) > 1e-9*tc.want {
				t.Errorf("result.json inferred_tokens %+v, want factor 69 and %.9g", it, tc.want)
			}
		})
	}
}

// TestGPTJPresetRuns: --preset gptj sets infer_token_latencies and a
// factor of 69, as mlperf.conf does, and runs (it was refused while the
// engine did not infer): VALID against a model it holds, with the
// inferred rate in all three outputs. The durations are overridden short.
func TestGPTJPresetRuns(t *testing.T) {
	p := startProxy(t, model2ms)
	short := map[string][]string{
		// gptj sets sample_concatenate_permutation, so a run is a whole
		// number of passes over the loaded samples: 512 of them, enough
		// for early stopping at p99 (459 queries with none over).
		"Server":  {"--min-duration-ms", "300", "--min-query-count", "20", "--target-qps", "400", "--total-samples", "512", "--performance-samples", "512"},
		"Offline": {"--min-duration-ms", "100", "--min-query-count", "50", "--target-qps", "500"},
	}
	for _, sc := range []string{"Server", "Offline"} {
		t.Run(sc, func(t *testing.T) {
			out := t.TempDir()
			inv := runArgs(append([]string{"--target", targetOf(p, "http"), "--model", "m", "--preset", "gptj", "--scenario", sc, "--out", out}, short[sc]...)...)
			if inv.code != exitValid {
				t.Fatalf("want VALID: %+v", inv)
			}
			var res loadgen.Result
			b, err := os.ReadFile(filepath.Join(out, runlog.ResultFile))
			if err == nil {
				err = json.Unmarshal(b, &res)
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.API != "" {
				t.Errorf("result.json api %q for a tensor run, want none", res.API)
			}
			if !res.Requested.InferTokenLatencies || res.Requested.TokenLatencyScalingFactor != 69 || res.Requested.UseTokenLatencies {
				t.Fatalf("requested: infer %v factor %d use %v, want gptj's", res.Requested.InferTokenLatencies, res.Requested.TokenLatencyScalingFactor, res.Requested.UseTokenLatencies)
			}
			it := res.InferredTokens
			var want float64
			line, key := "Tokens per second (inferred): ", "result_inferred_tokens_per_second"
			if sc == "Server" {
				want = float64(69*(res.SamplesCompleted-1)) / (float64(res.FinalQueryAllSamplesDoneTimeNs) / 1e9)
				line, key = "Completed tokens per second (inferred): ", "result_inferred_completed_tokens_per_second"
				if it == nil || it.CompletedTokensPerSecond != want {
					t.Errorf("inferred_tokens %+v, want %v", it, want)
				}
			} else {
				want = float64(69*res.SamplesIssued) / (float64(res.SampleLatency.MaxNs) / 1e9)
				if it == nil || it.TokensPerSecond != want {
					t.Errorf("inferred_tokens %+v, want %v", it, want)
				}
			}
			sum := strings.Join(loadgenSummary(t, filepath.Join(out, runlog.SummaryFile)), "\n")
			if !strings.Contains(sum, "\n"+line) {
				t.Errorf("summary lacks %q:\n%s", line, sum)
			}
			got := detailValues(t, filepath.Join(out, runlog.DetailFile), map[string]string{key: ""})
			if f, err := strconv.ParseFloat(got[key], 64); err != nil || math.Abs(f-want) > 1e-5*want {
				t.Errorf("detail %s = %q, want %.6g", key, got[key], want)
			}
		})
	}
}

// TestLLMPresetSingleStream: an LLM preset in SingleStream runs with
// mlperf.conf's settings there (use_token_latencies on, p90, equal issue;
// refused while the engine judged token latencies in Server and Offline
// only) and is judged as LoadGen 6.0.17 judges it: by early stopping over
// the TTFT and TPOT arrays, with its token lines in the summary. The
// durations are overridden short: 64 prompts, the p90 early-stopping
// minimum (equal issue makes it two passes: LoadGen's rounding adds a
// whole pass even to a multiple).
func TestLLMPresetSingleStream(t *testing.T) {
	p := startProxy(t, "name=llm,kind=llm,max_seqs=64,step=2ms,per_seq=10us,prefill=1us")
	dir := filepath.Join(t.TempDir(), "out")
	res := completedRun(t, runArgs("--target", targetOf(p, "http"), "--model", "llm", "--out", dir,
		"--input-tokens", strconv.Itoa(llmInput), "--output-tokens", strconv.Itoa(llmOutput),
		"--preset", "llama2-70b-interactive", "--scenario", "SingleStream",
		"--min-duration-ms", "100", "--min-query-count", "64", "--total-samples", "64", "--performance-samples", "64"), dir)
	tl := res.TokenLatencies
	if !res.Requested.UseTokenLatencies || res.Effective.TargetLatencyPercentile != 0.9 || tl == nil {
		t.Fatalf("use_token_latencies %v, percentile %v, token_latencies %+v; want mlperf.conf's SingleStream", res.Requested.UseTokenLatencies,
			res.Effective.TargetLatencyPercentile, tl)
	}
	if !res.Valid || !tl.EarlyStoppingMet || tl.TTFTEarlyStopping == nil || tl.OutputTokens != llmOutput*res.SamplesIssued {
		t.Errorf("valid %v (%v), token verdict %+v; want VALID by early stopping with %d tokens", res.Valid, res.InvalidReasons, tl, llmOutput*res.SamplesIssued)
	}
	sum := strings.Join(loadgenSummary(t, filepath.Join(dir, runlog.SummaryFile)), "\n")
	for _, want := range []string{"\n90.0th first token percentile latency (ns) : ", "\nTTFT Early Stopping Result:\n * Processed at least 64 queries (",
		"\nTPS w/ loadgen overhead         : ", "\nMin Time per Output Token (ns)"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}

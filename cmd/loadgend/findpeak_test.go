package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/search"
)

func TestFindPeakExitStatusAndFiles(t *testing.T) {
	p := startProxy(t, "name=fast,fn=echo,dims=16,max_batch=0,latency=constant:100us,instances=4",
		"name=slow,fn=echo,dims=16,max_batch=0,latency=constant:20ms,instances=1")
	tests := []struct {
		name   string
		args   []string
		code   int
		trials int // at least
	}{
		// Everything passes below the upper bound: bisection to 10 QPS,
		// then 2 verifying runs.
		{"v0.5 peak found", []string{"--model", "fast", "--ruleset", "v0.5", "--target-qps", "50", "--search-upper", "100",
			"--search-precision", "10", "--verify-runs", "2"}, exitPeakFound, 6},
		// 50 req/s of capacity cannot hold 1000 QPS: the base run fails.
		{"loadgen6 no peak", []string{"--model", "slow", "--target-qps", "1000"}, exitNoPeak, 1},
		{"loadgen6 verify runs refused", []string{"--model", "fast", "--verify-runs", "3"}, exitError, 0},
		{"offline refused", []string{"--model", "fast", "--scenario", "Offline"}, exitError, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"--mode", "find-peak", "--target", "http://" + p.HTTPAddr(), "--min-duration-ms", "200",
				"--min-query-count", "1", "--target-latency-ms", "10", "--out", dir}, tc.args...)
			var out, errb bytes.Buffer
			code := runCommand(args, &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out.String(), errb.String())
			}
			if tc.code == exitError {
				return
			}
			res, err := search.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Trials) < tc.trials || res.Found != (tc.code == exitPeakFound) {
				t.Fatalf("record %+v", res)
			}
			for _, tr := range res.Trials {
				if _, err := os.Stat(filepath.Join(dir, tr.Dir, "mlperf_log_detail.txt")); err != nil {
					t.Errorf("trial %d: %v", tr.Index, err)
				}
			}
			if !strings.Contains(out.String(), "achieved/s") || !strings.Contains(out.String(), "Peak:") {
				t.Errorf("stdout lacks the table:\n%s", out.String())
			}
			if res.Found {
				if _, err := os.Stat(filepath.Join(dir, "mlperf_log_summary.txt")); err != nil {
					t.Errorf("peak's summary not copied: %v", err)
				}
				if len(res.Verifying) != 2 {
					t.Errorf("verifying %v, want 2 trials", res.Verifying)
				}
			}
		})
	}
}

// A loadgen6 search judges its trials by the latency constraint, as
// LoadGen's FindPeakPerformance does: trials of 200 ms meet the bound but
// not early stopping, so the peak is an INVALID run. What loadgend prints
// and search_summary.txt say both, and the exit status is still "peak
// found". The default strategy scouts 50 and 100 (trials 1 and 2) and
// verifies 100 at full length (trial 3), the peak's trial.
func TestFindPeakSaysWhatItJudgedBy(t *testing.T) {
	p := startProxy(t, "name=fast,fn=echo,dims=16,max_batch=0,latency=constant:100us,instances=4")
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := runCommand([]string{"--mode", "find-peak", "--target", "http://" + p.HTTPAddr(), "--model", "fast",
		"--min-duration-ms", "200", "--min-query-count", "1", "--target-latency-ms", "100", "--target-qps", "50",
		"--search-upper", "100", "--out", dir}, &out, &errb)
	if code != exitPeakFound {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitPeakFound, out.String(), errb.String())
	}
	file, err := os.ReadFile(filepath.Join(dir, search.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), string(file)) {
		t.Errorf("stdout is not the summary:\n%s\nsearch_summary.txt:\n%s", out.String(), file)
	}
	for _, want := range []string{
		"Trials judged by the latency constraint (p99 ≤ 100 ms) with no failed samples.",
		"p99 ≤ 100 ms  early stopping  min duration  min queries  no failed  run verdict  search pass",
		"scheduled samples/s, the figure to report (trial 3, asked 100 queries/s) by the latency constraint (p99 ≤ 100 ms) with no failed samples; as a single run it is INVALID: early stopping not met\n",
	} {
		if !strings.Contains(string(file), want) {
			t.Errorf("summary lacks %q:\n%s", want, file)
		}
	}
	res, err := search.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.JudgedBy != search.JudgedByLatency || res.PeakRunVerdict != "INVALID" || len(res.Trials) != 3 || res.PeakTrial != 3 ||
		res.Trials[2].Stage != search.StageVerify || res.Trials[2].Criteria == nil || !res.Trials[2].Criteria.LatencyMet {
		t.Errorf("search.json %+v", res)
	}
}

// --goodput makes find-peak a goodput search: judged by the share of
// samples meeting --slo (search.json's judged_by, each trial's goodput),
// and refused without --slo.
func TestFindPeakGoodput(t *testing.T) {
	p := startProxy(t, "name=llm,kind=llm,max_seqs=64,step=2ms,per_seq=10us,prefill=1us")
	args := []string{"--mode", "find-peak", "--target", "http://" + p.HTTPAddr(), "--model", "llm", "--api", "openai-chat",
		"--scenario", "Server", "--input-tokens", "8", "--output-tokens", "16", "--min-duration-ms", "300", "--min-query-count", "1",
		"--target-latency-ms", "5", "--target-qps", "20", "--search-upper", "40", "--goodput", "90"}
	var out, errb bytes.Buffer
	if code := runCommand(append(args, "--out", t.TempDir()), &out, &errb); code != exitError || !strings.Contains(errb.String(), "--goodput") {
		t.Errorf("without --slo: exit %d, stderr %q; want %d naming --goodput", code, errb.String(), exitError)
	}
	dir := t.TempDir()
	out.Reset()
	errb.Reset()
	if code := runCommand(append(args, "--slo", "ttft=1s,tpot=1s", "--out", dir), &out, &errb); code != exitPeakFound {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitPeakFound, out.String(), errb.String())
	}
	res, err := search.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.JudgedBy != search.JudgedByGoodput || res.GoodputPercent != 90 || res.Peak != 40 || len(res.Trials) == 0 || res.Trials[0].Goodput == nil {
		t.Errorf("judged by %q at %v%%, peak %v, trials %+v", res.JudgedBy, res.GoodputPercent, res.Peak, res.Trials)
	}
	if !strings.Contains(out.String(), "goodput: at least 90% of the samples issued meeting the SLO (ttft=1s,tpot=1s)") {
		t.Errorf("summary:\n%s", out.String())
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/search"
)

// TestSweepRunsOneTrialPerRate: --mode sweep runs a Server trial at each
// rate, in order, each with its LoadGen logs, records them in search.json
// (mode sweep) and prints the latency-vs-load table and the p99 plot.
func TestSweepRunsOneTrialPerRate(t *testing.T) {
	p := startProxy(t, "name=fast,fn=echo,dims=16,max_batch=0,latency=constant:100us,instances=4")
	for _, tc := range []struct{ name, flag, value string }{
		{"rates", "--rates", "20,40,80"},
		{"rate-range", "--rate-range", "20:60:20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var out, errb bytes.Buffer
			code := runCommand([]string{"--mode", "sweep", tc.flag, tc.value, "--target", "http://" + p.HTTPAddr(), "--model", "fast",
				"--min-duration-ms", "200", "--min-query-count", "1", "--target-latency-ms", "10", "--out", dir}, &out, &errb)
			if code != exitSweepDone {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
			}
			res, err := search.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]float64{"rates": {20, 40, 80}, "rate-range": {20, 40, 60}}[tc.name]
			if res.Mode != search.ModeSweep || len(res.Trials) != len(want) {
				t.Fatalf("search.json: mode %q, %d trials, want %q and %d", res.Mode, len(res.Trials), search.ModeSweep, len(want))
			}
			for i, tr := range res.Trials {
				if tr.Target != want[i] || tr.Phase != search.PhaseSweep || tr.Latency == nil || tr.Achieved <= 0 {
					t.Errorf("trial %d: %+v, want rate %v with latencies", i+1, tr, want[i])
				}
				if _, err := os.Stat(filepath.Join(dir, tr.Dir, "mlperf_log_detail.txt")); err != nil {
					t.Errorf("trial %d: %v", tr.Index, err)
				}
			}
			text := out.String()
			for _, w := range []string{"rate asked/s  completed/s", "p99 vs rate", "Ended: completed: 3 rates swept"} {
				if !strings.Contains(text, w) {
					t.Errorf("stdout lacks %q:\n%s", w, text)
				}
			}
			for _, r := range want {
				if !strings.Contains(text, search.FmtRate(r)+"/s │") {
					t.Errorf("plot lacks a bar for %v:\n%s", r, text)
				}
			}
		})
	}
}

func TestSweepFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "sweep"}, "--mode sweep needs --rates"},
		{[]string{"--mode", "sweep", "--rates", "10,20", "--rate-range", "10:20:10"}, "--rates and --rate-range: give one"},
		{[]string{"--mode", "sweep", "--rates", "10,x"}, `--rates: "x" is not a positive number`},
		{[]string{"--mode", "sweep", "--rates", "10,-5"}, `--rates: "-5" is not a positive number`},
		{[]string{"--mode", "sweep", "--rate-range", "10:20"}, `--rate-range: "10:20" is not start:end:step`},
		{[]string{"--mode", "sweep", "--rate-range", "20:10:5"}, "--rate-range: end 10 is below start 20"},
		{[]string{"--mode", "sweep", "--rate-range", "1:1000:1"}, "makes 1000 trials; a sweep runs at most 100"},
		{[]string{"--rates", "10,20"}, "--rates: only with --mode sweep"},
		{[]string{"--mode", "sweep", "--rates", "10", "--verify-runs", "3"}, "--verify-runs: only with --mode find-peak"},
		{[]string{"--mode", "sweep", "--rates", "10", "--scenario", "Offline"}, "a sweep varies the Server scenario's rate, not Offline's"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"--target", "http://127.0.0.1:1", "--model", "m"}, tc.args...)
			if code := runCommand(args, &out, &errb); code != exitError {
				t.Fatalf("exit %d, want %d", code, exitError)
			}
			if !strings.Contains(errb.String(), tc.want) {
				t.Errorf("stderr %q lacks %q", errb.String(), tc.want)
			}
		})
	}
}

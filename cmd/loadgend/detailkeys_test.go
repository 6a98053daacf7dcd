package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/internal/loadgenkeys"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runner"
)

// detailKeys reads a detail log's keys in order, every line. It splits
// them into LoadGen's keys (occasional error and warning lines left out)
// and netloadgen's, and fails on a LoadGen key after netloadgen's or an
// occasional line outside a run of queries (between generated_query_duration
// and the logger counters).
func detailKeys(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	ours := false
	for i, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Key string }
		js, ok := strings.CutPrefix(l, ":::MLLOG ")
		if !ok || json.Unmarshal([]byte(js), &e) != nil {
			t.Fatalf("%s line %d is no MLLOG line: %q", path, i+1, l)
		}
		switch {
		case strings.HasPrefix(e.Key, "netloadgen_"):
			ours = true
		case ours:
			t.Errorf("line %d: LoadGen key %s after netloadgen's keys", i+1, e.Key)
		case strings.HasPrefix(e.Key, "error_") || e.Key == "warning_generic_message":
			if len(keys) == 0 || keys[len(keys)-1] != "generated_query_duration" {
				t.Errorf("line %d: %s outside a run of queries", i+1, e.Key)
			}
		default:
			keys = append(keys, e.Key)
		}
	}
	return keys
}

// TestDetailLogKeysAgainstSUTProxy runs each scenario against sutproxy
// (SingleStream and Server also with token latencies, and each scenario in
// accuracy mode) and reads mlperf_log_detail.txt: its LoadGen keys are
// LoadGen 6.0.17's for the same settings, in LoadGen's order
// (internal/loadgenkeys, written from LoadGen's source).
func TestDetailLogKeysAgainstSUTProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end runs")
	}
	p := startProxy(t, model2ms)
	llm := startProxy(t, llmEOS)
	tokenArgs := []string{"--input-tokens", "16", "--output-tokens", "8", "--use-token-latencies",
		"--ttft-latency-ms", "2000", "--tpot-latency-ms", "200"}
	for _, tc := range []struct {
		name     string
		target   string
		model    string
		scenario string
		args     []string
		tokens   bool
		accuracy bool
	}{
		{"SingleStream", targetOf(p, "http"), "m", "SingleStream",
			[]string{"--min-duration-ms", "200", "--min-query-count", "50"}, false, false},
		{"MultiStream", targetOf(p, "grpc"), "m", "MultiStream",
			[]string{"--samples-per-query", "4", "--min-duration-ms", "200", "--min-query-count", "50"}, false, false},
		{"Server", targetOf(p, "http"), "m", "Server",
			[]string{"--target-qps", "200", "--target-latency-ms", "50", "--min-duration-ms", "300", "--min-query-count", "50"}, false, false},
		{"Offline", targetOf(p, "grpc"), "m", "Offline",
			[]string{"--target-qps", "2000", "--min-duration-ms", "100", "--min-query-count", "1"}, false, false},
		{"SingleStream tokens", "http://" + llm.HTTPAddr(), "llm", "SingleStream",
			append([]string{"--min-duration-ms", "100", "--min-query-count", "16"}, tokenArgs...), true, false},
		{"Server tokens", "http://" + llm.HTTPAddr(), "llm", "Server",
			append([]string{"--target-qps", "50", "--min-duration-ms", "300", "--min-query-count", "15"}, tokenArgs...), true, false},
		{"accuracy SingleStream", targetOf(p, "http"), "m", "SingleStream", nil, false, true},
		{"accuracy MultiStream", targetOf(p, "grpc"), "m", "MultiStream", []string{"--samples-per-query", "4"}, false, true},
		{"accuracy Server", targetOf(p, "http"), "m", "Server", []string{"--target-qps", "2000"}, false, true},
		{"accuracy Offline", targetOf(p, "grpc"), "m", "Offline", nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			args := append([]string{"--target", tc.target, "--model", tc.model, "--scenario", tc.scenario, "--out", dir,
				"--drain-timeout-ms", "5000"}, tc.args...)
			want := loadgenkeys.Run{Scenario: tc.scenario, Tokens: tc.tokens, Accuracy: tc.accuracy}
			if tc.accuracy {
				// 40 samples in loadable sets of 16: three sets.
				args = append(args, "--mode", "accuracy", "--total-samples", "40", "--performance-samples", "16")
				want.Sets = 3
			}
			inv := runArgs(args...)
			if tc.accuracy {
				if inv.code != exitValid {
					t.Fatalf("accuracy run: %v", inv)
				}
				var res struct{ Sets int }
				b, err := os.ReadFile(filepath.Join(dir, runner.AccuracyResultFile))
				if err != nil || json.Unmarshal(b, &res) != nil || res.Sets != 3 {
					t.Fatalf("accuracy_result.json: %s (%v)", b, err)
				}
			} else {
				want.Invalid = !completedRun(t, inv, dir).Valid
			}
			got := detailKeys(t, filepath.Join(dir, runlog.DetailFile))
			if w := loadgenkeys.Detail(want); !slices.Equal(got, w) {
				i := 0
				for i < len(got) && i < len(w) && got[i] == w[i] {
					i++
				}
				t.Errorf("detail log keys differ from LoadGen 6.0.17's (%+v) at key %d:\n got %q\nwant %q",
					want, i, got[i:min(i+6, len(got))], w[i:min(i+6, len(w))])
			}
		})
	}
}

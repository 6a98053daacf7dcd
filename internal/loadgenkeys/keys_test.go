package loadgenkeys

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestListsMatchLoadGenOutput checks the lists against LoadGen 6.0.17's own
// output: the token vectors (../shared/testdata/loadgen, copied into
// pkg/mlperflog/testdata) are LogRequestedTestSettings, LogEffectiveSettings
// and PerformanceSummary::LogDetail run through the real logger, so their
// keys, occasional lines left out, are Requested, Effective and Results.
func TestListsMatchLoadGenOutput(t *testing.T) {
	for _, c := range []struct {
		file, scenario string
		invalid        bool
	}{
		{"token_server_small", "Server", false},
		{"token_offline_small", "Offline", false},
	} {
		b, err := os.ReadFile("../../pkg/mlperflog/testdata/" + c.file + ".mlperf_log_detail.txt")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e struct{ Key string }
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, ":::MLLOG ")), &e); err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			if !strings.HasPrefix(e.Key, "error_") {
				got = append(got, e.Key)
			}
		}
		want := append(append(Requested(c.scenario, true), Effective()...), Results(c.scenario, true, c.invalid)...)
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", c.file, got, want)
		}
	}
}

func TestDetailShapes(t *testing.T) {
	perf := Detail(Run{Scenario: "Offline"})
	acc := Detail(Run{Scenario: "Offline", Accuracy: true, Sets: 2})
	if perf[len(perf)-1] != "num_errors" {
		t.Errorf("a performance run ends with %s, want num_errors", perf[len(perf)-1])
	}
	if slices.Contains(acc, "result_validity") || slices.Contains(acc, "num_errors") {
		t.Errorf("an accuracy run has result keys: RunAccuracyMode logs no PerformanceSummary")
	}
	n := 0
	for _, k := range acc {
		if k == "loaded_qsl_set" {
			n++
		}
	}
	if n != 2 || acc[len(acc)-1] != "power_end" {
		t.Errorf("accuracy run with 2 sets: %d loaded_qsl_set, last key %s", n, acc[len(acc)-1])
	}
}

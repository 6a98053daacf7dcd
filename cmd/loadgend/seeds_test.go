package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/mlperflog"
	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// TestRunsLogTheOfficialSeeds: a plain run, a --user-conf run and a
// --preset resnet50 run each log LoadGen 6.0.17's official seeds (its
// built-in mlperf.conf's), which the submission checker's seeds_check
// requires (issue 16). The values are LoadGen 6.0.17's, written out here.
func TestRunsLogTheOfficialSeeds(t *testing.T) {
	want := map[string]string{
		"effective_qsl_rng_seed":          "2085463073848966840",
		"effective_sample_index_rng_seed": "2747215439041700203",
		"effective_schedule_rng_seed":     "16159082839903944936",
	}
	p := startProxy(t, model2ms)
	dir := t.TempDir()
	conf := filepath.Join(dir, "user.conf")
	// A user.conf cannot set the seeds (only mlperf.conf's count); it sets
	// the run short.
	if err := os.WriteFile(conf, []byte("*.Server.min_duration = 200\n*.Server.target_qps = 200\n*.*.qsl_rng_seed = 77\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	short := []string{"--min-duration-ms", "200", "--min-query-count", "10", "--target-qps", "200"}
	for name, extra := range map[string][]string{
		"plain":     short,
		"user-conf": {"--user-conf", conf, "--target-latency-ms", "100", "--min-query-count", "10"},
		"preset":    append([]string{"--preset", "resnet50"}, short...),
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, name)
			inv := runArgs(append([]string{"--target", targetOf(p, "http"), "--model", "m", "--scenario", "Server", "--out", out}, extra...)...)
			if inv.code != exitValid && inv.code != exitInvalid {
				t.Fatalf("want a verdict: %v", inv)
			}
			got := detailValues(t, filepath.Join(out, runlog.DetailFile), want)
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %q, want LoadGen 6.0.17's %s", k, got[k], v)
				}
			}
		})
	}
}

// detailValues reads the values of keys from a detail log, as text.
func detailValues(t *testing.T, path string, keys map[string]string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(sc.Text(), mlperflog.DetailPrefix)), &e); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		if _, ok := keys[e.Key]; ok {
			got[e.Key] = strings.Trim(string(e.Value), `"`)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

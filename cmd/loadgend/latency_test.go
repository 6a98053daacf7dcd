package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/runlog"
)

// TestRunLatencySpectrum: `loadgend run --latency` prints the percentile
// spectrum after the verdict, its percentiles are result.json's exact ones,
// the same text is latency_spectrum.txt, and the run's per-second time
// series adds up to result.json's sample counts.
func TestRunLatencySpectrum(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	p := startProxy(t, model2ms)
	dir := t.TempDir()
	inv := runArgs("--target", targetOf(p, "http"), "--model", "m", "--scenario", "Server", "--target-qps", "200",
		"--target-latency-ms", "50", "--latency-percentile", "0.9", "--min-duration-ms", "1200", "--min-query-count", "150",
		"--out", dir, "--latency")
	res := completedRun(t, inv, dir)
	if res.SamplesFailed != 0 {
		t.Fatalf("the test's run should not fail samples: %v", inv)
	}
	verdict := strings.Index(inv.stdout, ": "+res.Validity)
	spectrum := strings.Index(inv.stdout, "Latency distribution (exact, ")
	if verdict < 0 || spectrum < verdict {
		t.Fatalf("no spectrum after the verdict line: %v", inv)
	}
	for _, p := range []float64{0.5, 0.9, 0.99} {
		v, ok := res.SampleLatency.At(p)
		if !ok {
			t.Fatalf("result.json has no p%v", p)
		}
		if line := fmt.Sprintf(" %8.3f%% %12.3fms\n", p*100, float64(v)/1e6); !strings.Contains(inv.stdout[spectrum:], line) {
			t.Errorf("spectrum lacks result.json's p%v (%q):\n%s", p, line, inv.stdout[spectrum:])
		}
	}
	file, err := os.ReadFile(filepath.Join(dir, runlog.SpectrumFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(inv.stdout, string(file)) {
		t.Errorf("printed spectrum differs from %s:\n%s\nfile:\n%s", runlog.SpectrumFile, inv.stdout[spectrum:], file)
	}
	b, err := os.ReadFile(filepath.Join(dir, runlog.TimeseriesJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var ts runlog.Timeseries
	if err := json.Unmarshal(b, &ts); err != nil {
		t.Fatal(err)
	}
	var issued, completed, failed int64
	for _, s := range ts.Seconds {
		issued, completed, failed = issued+s.Issued, completed+s.Completed, failed+s.Failed
	}
	if len(ts.Seconds) < 2 || issued != res.SamplesIssued || completed != res.SamplesCompleted || failed != res.SamplesFailed {
		t.Errorf("%d seconds adding up to %d issued, %d completed, %d failed; result.json %d, %d, %d",
			len(ts.Seconds), issued, completed, failed, res.SamplesIssued, res.SamplesCompleted, res.SamplesFailed)
	}
}

package readmetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/internal/testtool"
)

// TestDemo runs `make demo`'s script, the README's first command, on the
// binaries built here, shortened to 2 s: it starts everything on free ports,
// drives loadgend with curl, and exits 0 only when the run is VALID. A server
// it left running would hold its output open, and runScript would fail.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs a Server scenario")
	}
	testtool.Need(t, "bash")
	testtool.Need(t, "curl")
	bin := buildBinaries(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	env := cleanEnv("BIN="+bin, "TMPDIR="+t.TempDir(), "DEMO_DURATION_MS=2000", "DEMO_QPS=1000",
		// The suite runs packages in parallel on two cores: a 10 ms p99 is the
		// demo's bound on a quiet machine, not one for a loaded test run.
		"DEMO_TARGET_LATENCY_MS=100")
	out, err := runScript(ctx, repoRoot, env, "bash", "scripts/demo.sh")
	if err != nil {
		t.Fatalf("scripts/demo.sh: %v\n%s", err, out)
	}
	// The verdict with its reasons (none for a VALID run), not the summary.
	for _, want := range []string{"   validity: VALID\n", ": VALID; summary: curl ", "/files/mlperf_log_summary.txt; all files under"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q\n%s", want, out)
		}
	}
	if strings.Contains(out, "invalid_reasons:") {
		t.Errorf("a VALID run's demo lists invalid reasons\n%s", out)
	}
}

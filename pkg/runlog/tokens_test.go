package runlog_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// A generative run's tokens appear in netloadgen's summary section, as
// netloadgen_ detail keys, and in the summary line; a run without tokens
// has none of them.
func TestWriteTokens(t *testing.T) {
	run, res := execute(t, scenarioCase{name: "Server", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server,
		latency: constLatency(300 * time.Microsecond)})
	dir := t.TempDir()
	if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	if s := readFile(t, filepath.Join(dir, runlog.SummaryFile)); strings.Contains(s, "ttft") || strings.Contains(runlog.SummaryLine(res), "tokens") {
		t.Errorf("tokens in the logs of a run without them:\n%s", s)
	}

	good, met := 12.5, int64(25)
	res.Tokens = &loadgen.TokenResult{
		Samples: 100, TTFT: loadgen.TokenStats{Count: 100, Mean: 12_345_678, P50: 12_000_000, P90: 20_000_000, P99: 30_000_000, Max: 40_000_000},
		TPOT:         loadgen.TokenStats{Count: 90, Mean: 2_000_000, P50: 1_500_000, P90: 2_500_000, P99: 3_000_000, Max: 4_000_000},
		OutputTokens: 12800, InputTokens: 51200, OutputTokensPerSecond: 6400, OutputTokensPerSecondPerUser: 500,
		SLO: &genai.SLO{TTFT: 500 * time.Millisecond, TPOT: 50 * time.Millisecond}, SamplesMeetingSLO: &met, GoodputSamplesPerSecond: &good,
		TokenCountSource: loadgen.TokensFromServer,
	}
	dir = t.TempDir()
	if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
		t.Fatal(err)
	}
	summary := readFile(t, filepath.Join(dir, runlog.SummaryFile))
	for label, want := range map[string]string{
		"  ttft":                       "mean 12.346 ms, p50 12.000, p90 20.000, p99 30.000, max 40.000 ms (100)",
		"  itl":                        "none",
		"  output_tokens":              "12800",
		"  output_tokens_per_second":   "6400.00",
		"  goodput_samples_per_second": "12.50 (25 of 100 samples met ttft=500ms,tpot=50ms)",
		"  token_count_source":         "server",
	} {
		if got := summaryValue(t, summary, label); got != want {
			t.Errorf("summary %s = %q, want %q", label, got, want)
		}
	}
	if got := string(detailValue(t, readDetail(t, dir), "netloadgen_input_tokens")); got != `"51200"` {
		t.Errorf("netloadgen_input_tokens %s", got)
	}
	line := runlog.SummaryLine(res)
	for _, want := range []string{"tokens: TTFT p50 12.000 ms p99 30.000 ms, TPOT p50 1.500 ms p99 3.000 ms, 6400.0 output tokens/s (server)", "goodput 12.50 samples/s"} {
		if !strings.Contains(line, want) {
			t.Errorf("summary line lacks %q:\n%s", want, line)
		}
	}
}

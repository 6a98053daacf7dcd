package mlperflog

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// requestedKeys is the requested_* keys of a detail log with their
// values as written, in order.
func requestedKeys(t *testing.T, text string) []string {
	t.Helper()
	recs, _ := parseDetail(t, text)
	var out []string
	for _, r := range recs {
		if strings.HasPrefix(r.Key, "requested_") {
			out = append(out, r.Key+" = "+string(r.Value))
		}
	}
	return out
}

// TestRequestedTokenSettingsMatchLoadGen: with use_token_latencies the
// requested settings are LoadGen 6.0.17's key for key and value for value
// (the vectors token_server_small and token_offline_small of
// ../shared/testdata/loadgen): requested_use_token_latencies, and for
// Server requested_server_ttft_latency and requested_server_tpot_latency
// after it.
func TestRequestedTokenSettingsMatchLoadGen(t *testing.T) {
	for _, c := range []struct {
		file string
		edit func(*Requested)
	}{
		{"token_server_small", func(r *Requested) {
			r.Scenario, r.ServerTargetQPS, r.ServerTargetLatencyNs = trace.Server, 3.4, 0
			r.ServerTTFTLatencyNs, r.ServerTPOTLatencyNs = 1_200_000_000, 55_000_000
		}},
		{"token_offline_small", func(r *Requested) {
			r.Scenario, r.OfflineExpectedQPS = trace.Offline, 3
			r.ServerTTFTLatencyNs, r.ServerTPOTLatencyNs = 100_000_000, 100_000_000
		}},
	} {
		want, err := os.ReadFile("testdata/" + c.file + ".mlperf_log_detail.txt")
		if err != nil {
			t.Fatal(err)
		}
		r := &Requested{Requested: trace.DefaultSettings(), Mode: trace.PerformanceOnly, UseTokenLatencies: true,
			ServerFindPeakQPSDecimalsOfPrecision: 1, ServerFindPeakQPSBoundaryStepSize: 1}
		r.MinDurationMs, r.MinQueryCount, r.PerformanceSampleCountOverride = 600_000, 100, 24576
		r.QSLRNGSeed, r.SampleIndexRNGSeed, r.ScheduleRNGSeed = 2085463073848966840, 2747215439041700203, 16159082839903944936
		c.edit(r)
		var b bytes.Buffer
		d := NewDetailLog(&b, DetailOptions{PID: 1, TID: 1})
		must(t, d.LogRequestedSettings(0, r))
		got, w := requestedKeys(t, b.String()), requestedKeys(t, string(want))
		if !slices.Equal(got, w) {
			t.Errorf("%s:\n got %q\nwant %q", c.file, got, w)
		}
	}
}

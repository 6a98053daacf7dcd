package loadgen

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// LoadGen's rules on a hand-checkable list: TPOT truncated, a sample of one
// token (or none) counted as 0 tokens with TPOT −(latency − TTFT), means
// as int64 sums over the count, percentiles sorted[floor(n·p)].
func TestJudgeTokenLatenciesRules(t *testing.T) {
	samples := []TokenSample{
		{LatencyNs: 1000, FirstTokenNs: 100, Tokens: 4}, // TPOT 300
		{LatencyNs: 1000, FirstTokenNs: 200, Tokens: 3}, // TPOT 400
		{LatencyNs: 500, FirstTokenNs: 300, Tokens: 1},  // few: TPOT −200, 0 tokens
		{LatencyNs: 700, FirstTokenNs: 400, Tokens: 0},  // few: TPOT −300
		{LatencyNs: 1001, FirstTokenNs: 0, Tokens: 4},   // TPOT 333 (1001/3 truncated)
	}
	in := tokenRun{scenario: trace.Server, percentile: 0.5, ttftBound: 300, tpotBound: 333, queriesIssued: 5,
		finalIssuedNs: 2e9, finalDone: 4e9, meanLatency: 840}
	tl := judgeTokenLatencies(in, samples)
	if tl.FewTokenSamples != 2 || tl.OutputTokens != 11 {
		t.Errorf("few %d, tokens %d; want 2 and 11", tl.FewTokenSamples, tl.OutputTokens)
	}
	// TPOT sorted: −300 −200 300 333 400; mean (−300−200+300+333+400)/5 = 106.
	if tl.TPOT.MinNs != -300 || tl.TPOT.MaxNs != 400 || tl.TPOT.MeanNs != 106 || tl.TPOTAtPercentileNs != 300 {
		t.Errorf("TPOT table %+v at p50 %d; want min −300, max 400, mean 106, p50 300", tl.TPOT, tl.TPOTAtPercentileNs)
	}
	// TTFT sorted: 0 100 200 300 400; p50 = 200.
	if tl.TTFT.MeanNs != 200 || tl.TTFTAtPercentileNs != 200 || !tl.TTFTMet || !tl.TPOTMet {
		t.Errorf("TTFT %+v at p50 %d, met %v/%v; want mean 200, p50 200, both met", tl.TTFT, tl.TTFTAtPercentileNs, tl.TTFTMet, tl.TPOTMet)
	}
	if tl.CompletedTokensPerSecond != 11.0/4 || tl.TokenThroughputWithLoadgenOverhead != 11.0/2 || tl.TokenThroughput != 11.0/(840*5) {
		t.Errorf("rates %v %v %v", tl.CompletedTokensPerSecond, tl.TokenThroughputWithLoadgenOverhead, tl.TokenThroughput)
	}
	// Five queries are far from enough for early stopping at p50 with
	// one TPOT over 333: TPOT fails first and TTFT is not judged.
	if tl.EarlyStoppingMet || tl.TPOTEarlyStopping == nil || tl.TPOTEarlyStopping.OverLatency != 1 || tl.TTFTEarlyStopping != nil {
		t.Errorf("early stopping %v, TPOT %+v, TTFT %+v; want TPOT failed (t = 1) and TTFT not judged", tl.EarlyStoppingMet, tl.TPOTEarlyStopping, tl.TTFTEarlyStopping)
	}
	in.tpotBound = 299
	if tl := judgeTokenLatencies(in, samples); tl.TPOTMet || !tl.TTFTMet {
		t.Errorf("TPOT p50 %d against 299: met %v (TTFT %v), want TPOT unmet only", tl.TPOTAtPercentileNs, tl.TPOTMet, tl.TTFTMet)
	}
}

// A failed sample is over both bounds; Offline has tokens per second and
// no constraints.
func TestJudgeTokenLatenciesFailedAndOffline(t *testing.T) {
	samples := []TokenSample{{LatencyNs: 10, FirstTokenNs: 1, Tokens: 10}, {Failed: true}}
	tl := judgeTokenLatencies(tokenRun{scenario: trace.Server, percentile: 0.5, ttftBound: 100, tpotBound: 100, queriesIssued: 2}, samples)
	if tl.TTFTMet || tl.TPOTMet || tl.TTFTAtPercentileNs != math.MaxInt64 {
		t.Errorf("a failed sample at p50: TTFT %d, met %v/%v; want both unmet", tl.TTFTAtPercentileNs, tl.TTFTMet, tl.TPOTMet)
	}
	off := judgeTokenLatencies(tokenRun{scenario: trace.Offline, maxLatencyNs: 2e9}, samples[:1])
	if off.TokensPerSecond != 5 || !off.Met() || off.TTFT.Count != 0 {
		t.Errorf("Offline: %+v; want 5 tokens/s, met, no TTFT table", off)
	}
}

// A sample list written and read back gives the same settings and
// samples; malformed lists are errors naming the line.
func TestSampleListRoundTrip(t *testing.T) {
	s := DefaultSettings(RulesetLoadGen6)
	s.Scenario, s.UseTokenLatencies, s.ServerTTFTLatencyNs, s.ServerTargetQPS, s.Task = trace.Server, true, 450_000_000, 3.4, "llama2-70b"
	rec := Recorded{SUTName: "my SUT", QSLTotalSampleCount: 24576, QSLPerformanceSampleCount: 24576, QueriesIssued: 3,
		FinalQueryScheduledTimeNs: 5, FinalQueryIssuedTimeNs: 6, FinalQueryAllSamplesDoneTimeNs: 7,
		Samples: []TokenSample{{LatencyNs: 10, FirstTokenNs: 2, Tokens: 5}, {LatencyNs: math.MaxInt64, FirstTokenNs: math.MaxInt64, Failed: true}, {LatencyNs: 9, FirstTokenNs: 9, Tokens: 1}}}
	var b bytes.Buffer
	if err := WriteSampleList(&b, s, rec); err != nil {
		t.Fatal(err)
	}
	got, grec, err := ReadSampleList(&b, DefaultSettings(RulesetLoadGen6))
	if err != nil {
		t.Fatal(err)
	}
	if got != s {
		t.Errorf("settings:\n got %+v\nwant %+v", got, s)
	}
	if len(grec.Samples) != 3 || grec.Samples[0] != rec.Samples[0] || !grec.Samples[1].Failed || grec.Samples[2] != rec.Samples[2] ||
		grec.QueriesIssued != 3 || grec.SUTName != rec.SUTName || grec.FinalQueryAllSamplesDoneTimeNs != 7 || grec.QSLTotalSampleCount != 24576 {
		t.Errorf("recorded %+v, want %+v", grec, rec)
	}
	for _, tc := range []struct{ text, want string }{
		{"# server_target_qps fast\n", "line 1: server_target_qps"},
		{"# colour blue\n", "line 1: colour: unknown key"},
		{"# sample_count 2\n1 1 1\n", "sample_count is 2 but 1"},
		{"1 2\n", "line 1: want latency_ns"},
		{"-5 0 3\n", "line 1: negative latency"},
	} {
		_, _, err := ReadSampleList(strings.NewReader(tc.text), DefaultSettings(RulesetLoadGen6))
		if !errors.Is(err, ErrInvalidRecord) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want ErrInvalidRecord naming %q", tc.text, err, tc.want)
		}
	}
}

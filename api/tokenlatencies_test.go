package api

import (
	"reflect"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// TestTokenLatenciesOfShortCircuit: when TPOT's early stopping failed,
// LoadGen does not judge TTFT's: the wire's TTFT has no early-stopping
// verdict and its over_bound is the engine's count; an Offline verdict
// has no samples judged and no early stopping at all.
func TestTokenLatenciesOfShortCircuit(t *testing.T) {
	tl := &loadgen.TokenLatencies{Percentile: 0.99, TTFTBoundNs: 450e6, TPOTBoundNs: 40e6,
		TTFT: loadgen.LatencyStats{Count: 300}, TTFTAtPercentileNs: 400e6, TPOTAtPercentileNs: 50e6, TTFTMet: true,
		TTFTOverBound: 1, TPOTOverBound: 30, FewTokenSamples: 2,
		TPOTEarlyStopping: &loadgen.EarlyStoppingResult{Met: false, OverLatency: 30, Required: 3000}}
	no := false
	want := &TokenLatencies{Percentile: 0.99, Samples: 300, SamplesUnderTwoTokens: 2, EarlyStoppingMet: &no,
		TTFT: TokenBound{PercentileNs: 400e6, BoundNs: 450e6, Met: true, OverBound: 1},
		TPOT: TokenBound{PercentileNs: 50e6, BoundNs: 40e6, OverBound: 30, EarlyStoppingMet: &no, EarlyStoppingRequired: 3000}}
	if got := TokenLatenciesOf(tl); !reflect.DeepEqual(got, want) {
		t.Errorf("TokenLatenciesOf = %+v, want %+v", got, want)
	}
	off := TokenLatenciesOf(&loadgen.TokenLatencies{Percentile: 0.99, TTFTMet: true, TPOTMet: true, EarlyStoppingMet: true})
	if off.Samples != 0 || !off.Met || off.EarlyStoppingMet != nil || off.TTFT.EarlyStoppingMet != nil {
		t.Errorf("Offline: %+v", off)
	}
	if TokenLatenciesOf(nil) != nil {
		t.Error("nil became a verdict")
	}
}

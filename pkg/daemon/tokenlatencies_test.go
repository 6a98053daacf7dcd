package daemon

import (
	"reflect"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// A finished run's status carries its result's token_latencies: the TTFT
// and TPOT verdict figures, as result.json has them.
func TestRunStatusCarriesTokenLatencies(t *testing.T) {
	result := `{"scenario":"Server","result_validity":"INVALID","token_latencies":{"percentile":0.99,
		"ttft_bound_ns":450000000,"tpot_bound_ns":40000000,"ttft":{"count":1200},"tpot":{"count":1200},
		"ttft_at_percentile_ns":480000000,"tpot_at_percentile_ns":30000000,"ttft_met":false,"tpot_met":true,
		"ttft_over_bound":40,"tpot_over_bound":2,"samples_with_fewer_than_2_tokens":5,"early_stopping_met":false,
		"tpot_early_stopping":{"met":true,"over_latency":2,"required":500},
		"ttft_early_stopping":{"met":false,"over_latency":40,"required":4500}}}`
	st, w := finishedRunStatus(t, result)
	no, yes := false, true
	want := &api.TokenLatencies{Percentile: 0.99, Samples: 1200, SamplesUnderTwoTokens: 5, EarlyStoppingMet: &no,
		TTFT: api.TokenBound{PercentileNs: 480_000_000, BoundNs: 450_000_000, OverBound: 40, EarlyStoppingMet: &no, EarlyStoppingRequired: 4500},
		TPOT: api.TokenBound{PercentileNs: 30_000_000, BoundNs: 40_000_000, Met: true, OverBound: 2, EarlyStoppingMet: &yes, EarlyStoppingRequired: 500}}
	if !reflect.DeepEqual(st.TokenLatencies, want) {
		t.Errorf("status token_latencies %+v, want %+v:\n%s", st.TokenLatencies, want, w.Body)
	}
}

package runspec

import (
	"errors"
	"testing"

	"github.com/netloadgen/netloadgen/api"
)

// A search's trial warm-up and retries (issue 33): the defaults, the
// settings' own warm-up kept when the search gives none, and 0 as given
// (off), not as absent.
func TestTrialWarmupAndRetryDefaults(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	n := func(v int) *int { return &v }
	for _, c := range []struct {
		name       string
		minMs      uint64
		settingsMs *uint64
		search     api.Search
		wantWarm   *uint64 // nil: the base settings' warm-up stands
		wantRetry  int
	}{
		{"defaults, short trials: 10%", 3000, nil, api.Search{Mode: api.SearchFindPeak}, u(300), 1},
		{"defaults, long trials: 1 s at most", 60000, nil, api.Search{Mode: api.SearchFindPeak}, u(1000), 1},
		{"settings.warmup_ms kept", 3000, u(700), api.Search{Mode: api.SearchFindPeak}, nil, 1},
		{"both off", 3000, nil, api.Search{Mode: api.SearchFindPeak, TrialWarmupMs: u(0), RetryFailedTrials: n(0)}, u(0), 0},
		{"the search's own wins", 3000, u(700), api.Search{Mode: api.SearchFindPeak, TrialWarmupMs: u(50), RetryFailedTrials: n(3)}, u(50), 3},
		{"a sweep warms up, never retries", 3000, nil, api.Search{Mode: api.SearchSweep, Rates: []float64{100}}, u(300), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := api.RunSpec{Target: "http://h:1", Model: "m", Scenario: "Server",
				Overrides: api.RunSettings{MinDurationMs: &c.minMs, WarmupMs: c.settingsMs}}
			s := c.search
			spec.Search = &s
			r, err := Build(spec, Env{})
			if err != nil {
				t.Fatal(err)
			}
			got := r.Search.TrialWarmupMs
			if (got == nil) != (c.wantWarm == nil) || (got != nil && *got != *c.wantWarm) {
				t.Errorf("trial warm-up %v, want %v", deref(got), deref(c.wantWarm))
			}
			if r.Search.RetryFailed != c.wantRetry {
				t.Errorf("retries %d, want %d", r.Search.RetryFailed, c.wantRetry)
			}
		})
	}
}

func deref(p *uint64) any {
	if p == nil {
		return "absent"
	}
	return *p
}

// Out-of-range retries are refused, naming the field; a sweep refuses
// retries altogether.
func TestRetryFailedTrialsChecked(t *testing.T) {
	for _, s := range []api.Search{
		{Mode: api.SearchFindPeak, RetryFailedTrials: func() *int { v := -1; return &v }()},
		{Mode: api.SearchFindPeak, RetryFailedTrials: func() *int { v := api.MaxRetryFailedTrials + 1; return &v }()},
		{Mode: api.SearchSweep, Rates: []float64{100}, RetryFailedTrials: func() *int { v := 1; return &v }()},
	} {
		spec := api.RunSpec{Target: "http://h:1", Model: "m", Scenario: "Server", Search: &s}
		_, err := Build(spec, Env{})
		var fe *api.FieldError
		if !errors.As(err, &fe) || fe.Field != "search.retry_failed_trials" {
			t.Errorf("%+v: error %v, want one naming search.retry_failed_trials", s, err)
		}
	}
}

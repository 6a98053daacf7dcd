package runspec

import (
	"errors"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// A search's trial warm-up and retries (issue 33): the defaults (each
// trial warms up for runner.DefaultTrialWarmupMs of its own minimum
// duration, a scout trial's being short: TrialWarmupDefault, no fixed
// warm-up), the settings' own warm-up kept when the search gives none, and
// 0 as given (off), not as absent.
func TestTrialWarmupAndRetryDefaults(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	n := func(v int) *int { return &v }
	for _, c := range []struct {
		name        string
		minMs       uint64
		settingsMs  *uint64
		search      api.Search
		wantWarm    *uint64 // nil: no fixed warm-up (the default's, or the base settings')
		wantDefault bool    // each trial's own default warm-up
		wantRetry   int
	}{
		{"defaults, short trials", 3000, nil, api.Search{Mode: api.SearchFindPeak}, nil, true, 1},
		{"defaults, long trials", 60000, nil, api.Search{Mode: api.SearchFindPeak}, nil, true, 1},
		{"defaults, LoadGen's own strategy", 3000, nil, api.Search{Mode: api.SearchFindPeak, Strategy: api.SearchFull}, nil, true, 1},
		{"settings.warmup_ms kept", 3000, u(700), api.Search{Mode: api.SearchFindPeak}, nil, false, 1},
		{"both off", 3000, nil, api.Search{Mode: api.SearchFindPeak, TrialWarmupMs: u(0), RetryFailedTrials: n(0)}, u(0), false, 0},
		{"the search's own wins", 3000, u(700), api.Search{Mode: api.SearchFindPeak, TrialWarmupMs: u(50), RetryFailedTrials: n(3)}, u(50), false, 3},
		{"a sweep warms up, never retries", 3000, nil, api.Search{Mode: api.SearchSweep, Rates: []float64{100}}, nil, true, 0},
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
			if r.Search.TrialWarmupDefault != c.wantDefault {
				t.Errorf("each trial's default warm-up %v, want %v", r.Search.TrialWarmupDefault, c.wantDefault)
			}
			if r.Search.RetryFailed != c.wantRetry {
				t.Errorf("retries %d, want %d", r.Search.RetryFailed, c.wantRetry)
			}
		})
	}
}

// A find-peak scouts unless asked for LoadGen's own search; the scout
// length reaches the runner; a sweep has no strategy.
func TestSearchStrategy(t *testing.T) {
	for _, c := range []struct {
		name      string
		search    api.Search
		wantStrat string
		wantScout time.Duration
	}{
		{"find-peak's default", api.Search{Mode: api.SearchFindPeak}, search.StrategyScout, 0},
		{"scout, its length given", api.Search{Mode: api.SearchFindPeak, Strategy: api.SearchScout, ScoutDurationMs: 2500}, search.StrategyScout, 2500 * time.Millisecond},
		{"the default strategy, a length given", api.Search{Mode: api.SearchFindPeak, ScoutDurationMs: 800}, search.StrategyScout, 800 * time.Millisecond},
		{"LoadGen's own", api.Search{Mode: api.SearchFindPeak, Strategy: api.SearchFull}, search.StrategyFull, 0},
		{"a sweep", api.Search{Mode: api.SearchSweep, Rates: []float64{100}}, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.search
			r, err := Build(api.RunSpec{Target: "http://h:1", Model: "m", Scenario: "Server", Search: &s}, Env{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Search.Options.Strategy != c.wantStrat || r.Search.ScoutDuration != c.wantScout {
				t.Errorf("strategy %q, scout length %v; want %q, %v", r.Search.Options.Strategy, r.Search.ScoutDuration, c.wantStrat, c.wantScout)
			}
		})
	}
}

// A strategy that is none, a scout length with LoadGen's own strategy,
// and either in a sweep are refused, naming the field.
func TestSearchStrategyChecked(t *testing.T) {
	for _, c := range []struct {
		search api.Search
		field  string
	}{
		{api.Search{Mode: api.SearchFindPeak, Strategy: "Scout"}, "search.strategy"},
		{api.Search{Mode: api.SearchFindPeak, Strategy: api.SearchFull, ScoutDurationMs: 1000}, "search.scout_duration_ms"},
		{api.Search{Mode: api.SearchSweep, Rates: []float64{100}, Strategy: api.SearchScout}, "search.strategy"},
		{api.Search{Mode: api.SearchSweep, Rates: []float64{100}, ScoutDurationMs: 1000}, "search.scout_duration_ms"},
	} {
		s := c.search
		_, err := Build(api.RunSpec{Target: "http://h:1", Model: "m", Scenario: "Server", Search: &s}, Env{})
		var fe *api.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: error %v, want one naming %s", c.search, err, c.field)
		}
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

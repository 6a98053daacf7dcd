package loadgen

import "strings"

// The validity criteria by name, as Result.NotMet gives them.
const (
	CriterionLatency         = "latency constraint" // result_perf_constraints_met
	CriterionMinDuration     = "min duration"       // result_min_duration_met
	CriterionMinQueries      = "min query count"    // result_min_queries_met
	CriterionEarlyStopping   = "early stopping"     // early_stopping_met
	CriterionNoFailedSamples = "no failed samples"  // no_failed_samples
)

// NotMet names the validity criteria r misses, in the order of
// InvalidReasons; nil for a VALID run.
func (r *Result) NotMet() []string {
	var out []string
	for _, c := range []struct {
		ok   bool
		name string
	}{
		{r.PerfConstraintsMet, CriterionLatency}, {r.MinDurationMet, CriterionMinDuration},
		{r.MinQueriesMet, CriterionMinQueries}, {r.EarlyStoppingMet, CriterionEarlyStopping},
		{r.NoFailedSamples, CriterionNoFailedSamples},
	} {
		if !c.ok {
			out = append(out, c.name)
		}
	}
	return out
}

// NotMetText says criteria NotMet named as one clause: "min duration not
// met; samples failed".
func NotMetText(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + " not met"
		if n == CriterionNoFailedSamples {
			parts[i] = "samples failed"
		}
	}
	return strings.Join(parts, "; ")
}

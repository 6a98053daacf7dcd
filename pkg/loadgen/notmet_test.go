package loadgen

import (
	"slices"
	"testing"
)

func TestNotMet(t *testing.T) {
	valid := &Result{PerfConstraintsMet: true, MinDurationMet: true, MinQueriesMet: true, EarlyStoppingMet: true, NoFailedSamples: true}
	if got := valid.NotMet(); got != nil {
		t.Errorf("a VALID run misses %v", got)
	}
	r := &Result{PerfConstraintsMet: true, MinQueriesMet: true}
	want := []string{CriterionMinDuration, CriterionEarlyStopping, CriterionNoFailedSamples}
	if got := r.NotMet(); !slices.Equal(got, want) {
		t.Errorf("NotMet = %v, want %v", got, want)
	}
	if got := NotMetText(want); got != "min duration not met; early stopping not met; samples failed" {
		t.Errorf("NotMetText = %q", got)
	}
}

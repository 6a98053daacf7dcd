package runner

import (
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// A loadgen6 trial is judged by the latency constraint, whatever its other
// criteria: a short trial that meets the bound passes although it is an
// INVALID run (too few queries for early stopping), and one the search's
// own early verdict stops is a latency failure in its criteria too.
func TestTrialCriteria(t *testing.T) {
	p := startProxy(t, "name=fast,fn=echo,dims=16,max_batch=0,latency=constant:100us,instances=4",
		"name=slow,fn=echo,dims=16,max_batch=0,latency=constant:20ms,instances=1")
	for _, tc := range []struct {
		model   string
		bound   time.Duration // far above fast's latency, half slow's
		qps     float64
		pass    bool
		verdict string
		stopped bool
	}{
		{"fast", 100 * time.Millisecond, 50, true, "INVALID", false},
		{"slow", 10 * time.Millisecond, 200, false, "INVALID", true},
	} {
		t.Run(tc.model, func(t *testing.T) {
			s := serverSettings(t, loadgen.RulesetLoadGen6, 200)
			s.ServerTargetLatencyNs = uint64(tc.bound)
			base := Spec{Target: targetOf(p, "http"), Model: tc.model, Settings: s, TotalSamples: 64, PerformanceSamples: 64}
			n := &networkTrials{Base: base, EarlyVerdict: true}
			tr, err := n.RunTrial(t.Context(), search.TrialRequest{Index: 1, Target: tc.qps, Phase: search.PhaseBase, Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			c := tr.Criteria
			if tr.Pass != tc.pass || tr.Verdict != tc.verdict || (tr.EarlyVerdict != "") != tc.stopped || c == nil ||
				c.LatencyMet != tc.pass || tr.LatencyBound != tc.bound {
				t.Fatalf("trial %+v, criteria %+v", tr, c)
			}
			if tc.pass && c.EarlyStoppingMet {
				t.Errorf("%d ms at %v QPS met early stopping: the case does not show a passing INVALID trial", s.MinDurationMs, tc.qps)
			}
		})
	}
}

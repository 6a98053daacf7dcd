package runlog

import (
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// A run with sessions says so in the summary line and its detail lines,
// TTFT per turn index; a run without says nothing of them.
func TestSessionLines(t *testing.T) {
	if sessionLines(&loadgen.Result{}) != nil || sessionSummary(&loadgen.Result{}) != "" {
		t.Fatal("a run without sessions has session lines")
	}
	res := &loadgen.Result{Sessions: &loadgen.SessionsResult{Sessions: 3, Completed: 2, Failed: 1, TurnsPlanned: 9, TurnsIssued: 7,
		Turns: []loadgen.TurnResult{{Turn: 1, TTFT: loadgen.TokenStats{Count: 3, P50: 9e6}}, {Turn: 2, TTFT: loadgen.TokenStats{Count: 2, P50: 2e6}}}}}
	if got := sessionSummary(res); !strings.Contains(got, "2 completed of 3") || !strings.Contains(got, "turn 1 9.000 ms, turn 2 2.000 ms") {
		t.Errorf("summary %q", got)
	}
	keys := map[string]string{}
	for _, f := range sessionLines(res) {
		keys[f.Key] = f.Value
	}
	if !strings.Contains(keys["sessions"], "7 of 9 turns issued") || !strings.Contains(keys["turn_2_ttft"], "p50 2.000") || keys["turn_2_tpot"] != "none" {
		t.Errorf("lines %v", keys)
	}
}

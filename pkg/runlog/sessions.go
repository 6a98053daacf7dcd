package runlog

import (
	"fmt"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/mlperflog"
)

// sessionLines are the summary's lines (netloadgen_ detail keys) of a run
// with multi-turn sessions: the sessions' counts and durations, and TTFT
// per turn index (a prefix cache's gain shows as turn 2+ below turn 1).
func sessionLines(res *loadgen.Result) []mlperflog.Field {
	sr := res.Sessions
	if sr == nil {
		return nil
	}
	f := []mlperflog.Field{
		{Key: "sessions", Value: fmt.Sprintf("%d started, %d completed, %d failed, %d unfinished; %d of %d turns issued",
			sr.Sessions, sr.Completed, sr.Failed, sr.Unfinished, sr.TurnsIssued, sr.TurnsPlanned)},
		{Key: "session_duration", Value: tokenStatsText(sr.DurationNs)},
	}
	for _, t := range sr.Turns {
		f = append(f, mlperflog.Field{Key: fmt.Sprintf("turn_%d_ttft", t.Turn), Value: tokenStatsText(t.TTFT)},
			mlperflog.Field{Key: fmt.Sprintf("turn_%d_tpot", t.Turn), Value: tokenStatsText(t.TPOT)})
	}
	return f
}

// sessionSummary is SummaryLine's clause for a run with sessions: TTFT
// p50 of the first turn and of the last turn index.
func sessionSummary(res *loadgen.Result) string {
	sr := res.Sessions
	if sr == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "; sessions: %d completed of %d", sr.Completed, sr.Sessions)
	if n := len(sr.Turns); n > 0 {
		ms := func(ns int64) string { return fmt.Sprintf("%.3f ms", float64(ns)/1e6) }
		fmt.Fprintf(&b, ", TTFT p50 turn 1 %s, turn %d %s", ms(sr.Turns[0].TTFT.P50), n, ms(sr.Turns[n-1].TTFT.P50))
	}
	return b.String()
}

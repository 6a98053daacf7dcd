package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// vline is a vertical mark on a chart over time: a stage's start.
type vline struct {
	X     float64
	Stage int
	Label string
}

// partRow is one stage or one model of a shaped run as its table shows it
// (stages[] and models[] of result.json), the values as text with their
// exact figures in data-value.
type partRow struct {
	// Key is result.json's path of the part (stages.1, models.0), Name
	// what the first cell says (the stage's span and rate, the model).
	Key, Name                       string
	Issued, Completed, Failed       int64
	P50, P99, TTFT, Goodput, Rate   string
	P99Value, TTFTValue, RateValue  string
	HasTokens, HasGoodput, HasRates bool
}

// shapeView is a shaped run's verdict text and its parts.
func shapeView(v *runView, res *loadgen.Result) {
	ls := res.LoadShape
	v.Kind = "load shape (not a LoadGen scenario)"
	if ls.VerdictBy == loadgen.VerdictBySLO {
		v.Verdict = fmt.Sprintf("%s (SLO %s)", res.Validity, ls.SLO)
	} else if res.Validity == "INVALID" {
		v.Verdict = "INVALID: " + strings.Join(res.InvalidReasons, "; ") // the shape ended early
	} else {
		v.Verdict, v.VerdictClass = loadgen.NAReason, "NA"
	}
	for _, s := range res.Stages {
		asked := fmtNum(s.RateAsked) + "/s"
		if s.RateFrom != nil && s.RateTo != nil {
			asked = fmtNum(*s.RateFrom) + "→" + fmtNum(*s.RateTo) + "/s"
		}
		r := partRow{Key: "stages." + strconv.Itoa(s.Stage), Name: fmt.Sprintf("%d: %s–%s s, %s asked", s.Stage, fmtNum(s.StartS), fmtNum(s.EndS), asked),
			Issued: s.SamplesIssued, Completed: s.SamplesCompleted, Failed: s.SamplesFailed,
			Rate: fmtFloat(s.RateAchieved, 2), RateValue: exactF(s.RateAchieved), HasRates: true}
		r.latency(s.SampleLatency, s.TTFT, s.GoodputSamplesPerSecond)
		v.Stages = append(v.Stages, r)
	}
	for i, m := range res.Models {
		r := partRow{Key: "models." + strconv.Itoa(i), Name: m.Model, Issued: m.SamplesIssued, Completed: m.SamplesCompleted, Failed: m.SamplesFailed}
		r.latency(m.SampleLatency, m.TTFT, m.GoodputSamplesPerSecond)
		v.Models = append(v.Models, r)
	}
	sameColumns(v.Stages)
	sameColumns(v.Models)
}

// sameColumns gives every row of a table the token and goodput columns
// when one row has them ("-" where a part has no value: a stage with no
// answered sample has no TTFT), so that the columns line up.
func sameColumns(rows []partRow) {
	tokens, goodput := false, false
	for _, r := range rows {
		tokens, goodput = tokens || r.HasTokens, goodput || r.HasGoodput
	}
	for i := range rows {
		r := &rows[i]
		if tokens && !r.HasTokens {
			r.HasTokens, r.TTFT = true, "-"
		}
		if goodput && !r.HasGoodput {
			r.HasGoodput, r.Goodput = true, "-"
		}
	}
}

// latency fills a row's latency, TTFT and goodput cells.
func (r *partRow) latency(l loadgen.LatencyStats, ttft *loadgen.TokenStats, goodput *float64) {
	r.P50, r.P99 = trialMsAt(l, 0.5), trialMsAt(l, 0.99)
	if v, ok := l.At(0.99); ok {
		r.P99Value = strconv.FormatInt(int64(v), 10)
	}
	if ttft != nil {
		r.HasTokens, r.TTFT, r.TTFTValue = true, fmtFloat(ms(ttft.P99), 3), strconv.FormatInt(ttft.P99, 10)
	}
	if goodput != nil {
		r.HasGoodput, r.Goodput = true, fmtFloat(*goodput, 2)
	}
}

// trialMsAt is a percentile in ms as a table shows it, "-" without one.
func trialMsAt(l loadgen.LatencyStats, p float64) string {
	v, ok := l.At(p)
	if !ok {
		return "-"
	}
	return fmtFloat(ms(int64(v)), 3)
}

// stageMarks are the stage starts of the runs with stages, each once.
func stageMarks(runs []*Run) []vline {
	var out []vline
	seen := map[float64]bool{}
	for _, r := range runs {
		if r.Series == nil {
			continue
		}
		for _, m := range r.Series.Stages {
			x := float64(m.StartNs) / 1e9
			if seen[x] {
				continue
			}
			seen[x] = true
			out = append(out, vline{X: x, Stage: m.Stage, Label: fmt.Sprintf("stage %d starts at %s s", m.Stage, fmtNum(x))})
		}
	}
	return out
}

// sessionsView is a run with sessions as its table shows it: the
// sessions' counts, then a row per turn index, where a prefix cache's gain
// shows as turn 2's and later turns' TTFT.
type sessionsView struct {
	Summary string
	Turns   []turnRow
}

// turnRow is one turn index of result.json's sessions.turns[]; P99Value
// holds the exact TTFT p99 in ns.
type turnRow struct {
	Turn                        int
	Issued, Completed, Failed   int64
	TTFT50, TTFT99, TPOT50, E2E string
	TTFT99Value                 string
}

// sessionsOf is s's view, nil without sessions.
func sessionsOf(s *loadgen.SessionsResult) *sessionsView {
	if s == nil {
		return nil
	}
	v := &sessionsView{Summary: fmt.Sprintf("%d sessions: %d completed, %d failed, %d unfinished; %d of %d turns issued",
		s.Sessions, s.Completed, s.Failed, s.Unfinished, s.TurnsIssued, s.TurnsPlanned)}
	if d := s.DurationNs; d.Count > 0 {
		v.Summary += fmt.Sprintf("; a completed session's duration p50 %s ms, p99 %s ms", fmtFloat(ms(d.P50), 1), fmtFloat(ms(d.P99), 1))
	}
	for _, t := range s.Turns {
		v.Turns = append(v.Turns, turnRow{Turn: t.Turn, Issued: t.Issued, Completed: t.Completed, Failed: t.Failed,
			TTFT50: tokenMs(t.TTFT, t.TTFT.P50), TTFT99: tokenMs(t.TTFT, t.TTFT.P99), TPOT50: tokenMs(t.TPOT, t.TPOT.P50),
			E2E: tokenMs(t.E2E, t.E2E.P99), TTFT99Value: strconv.FormatInt(t.TTFT.P99, 10)})
	}
	return v
}

// tokenMs is one of a TokenStats' figures in ms, "-" when it counted none.
func tokenMs(s loadgen.TokenStats, v int64) string {
	if s.Count == 0 {
		return "-"
	}
	return fmtFloat(ms(v), 3)
}

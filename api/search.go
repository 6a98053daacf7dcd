package api

import "github.com/netloadgen/netloadgen/pkg/trace"

// maxVerifyRuns bounds Search.VerifyRuns: each is a full-length run.
const maxVerifyRuns = 10

// check bounds a search block as the daemon runs it (CheckFields has
// checked its mode); whether the daemon runs searches at all is
// Limits.AllowSearch.
func (s Search) check(scenario string, lim Limits) error {
	if sc, err := trace.ParseScenario(scenario); err == nil && sc != trace.Server {
		return fieldErr("search.mode", "%s searches the Server scenario's QPS; the scenario is %s", SearchFindPeak, scenario)
	}
	for _, b := range []struct {
		field string
		v     float64
	}{{"lower_qps", s.LowerQPS}, {"upper_qps", s.UpperQPS}, {"precision", s.Precision}} {
		if b.v < 0 {
			return fieldErr("search."+b.field, "must not be negative, got %v", b.v)
		}
		if b.v > lim.MaxQPS {
			return fieldErr("search."+b.field, "%s QPS is over this daemon's limit of %s QPS", Num(b.v), Num(lim.MaxQPS))
		}
	}
	if s.UpperQPS != 0 && s.LowerQPS >= s.UpperQPS {
		return fieldErr("search.lower_qps", "%v must be below upper_qps %v", s.LowerQPS, s.UpperQPS)
	}
	if s.VerifyRuns < 0 || s.VerifyRuns > maxVerifyRuns {
		return fieldErr("search.verify_runs", "must be in [0, %d], got %d", maxVerifyRuns, s.VerifyRuns)
	}
	return nil
}

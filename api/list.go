package api

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Paging of GET /v1/runs.
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
	// MaxListScan bounds the runs one page of GET /v1/runs looks at
	// beyond the store's own state filter: a filter that matches little
	// (a model run once, long ago) must not make one request walk the
	// whole history. A page that stops at the bound holds fewer runs than
	// limit, maybe none, and a next_page_token to go on from the last run
	// it looked at: a client pages until there is no token, never until a
	// short page.
	MaxListScan = 10000
)

// Verdict filters of GET /v1/runs (ListQuery.Verdict): a finished run's
// validity, or VerdictNone for a run with none (not finished yet, failed or
// cancelled before a verdict, or judged N/A: a closed loop, a load shape
// without an SLO).
const (
	VerdictValid   = "VALID"
	VerdictInvalid = "INVALID"
	VerdictNone    = "none"
)

// ListQuery is GET /v1/runs' query:
// ?state=running,done&model=m&verdict=VALID&scenario=Server&limit=20&page_token=...
// The filters combine (a run must pass each one given).
type ListQuery struct {
	// States filters by state; empty lists every run. Given as a
	// comma-separated list or the parameter repeated.
	States []State
	// Model is the spec's model, exactly ("": any).
	Model string
	// Verdict is VerdictValid, VerdictInvalid or VerdictNone ("": any).
	Verdict string
	// Scenario is the spec's scenario as the API spells it (SingleStream,
	// MultiStream, Server, Offline; "": any). A spec that named none ran
	// DefaultScenario, and is stored so.
	Scenario string
	Limit    int
	// PageToken is opaque to clients: the daemon's next_page_token from
	// the previous page (a cursor, so new runs do not shift the pages).
	PageToken string
}

// Filtered reports whether the query filters by more than one state
// alone: the daemon then looks at each run's summary, and bounds the runs
// a page looks at (MaxListScan).
func (q ListQuery) Filtered() bool {
	return len(q.States) > 1 || q.Model != "" || q.Verdict != "" || q.Scenario != ""
}

// Matches reports whether a run in state st, whose spec names model and
// scenario and whose validity is validity ("" while it has none), passes
// the query's filters.
func (q ListQuery) Matches(st State, model, scenario, validity string) bool {
	if len(q.States) > 0 && !slices.Contains(q.States, st) {
		return false
	}
	if q.Model != "" && model != q.Model {
		return false
	}
	if q.Scenario != "" && cmpScenario(scenario) != q.Scenario {
		return false
	}
	switch q.Verdict {
	case "":
		return true
	case VerdictNone:
		return validity != VerdictValid && validity != VerdictInvalid
	}
	return validity == q.Verdict
}

// cmpScenario is a stored spec's scenario as the list filters it: one
// stored before DecodeRunSpec wrote the default in ran the default.
func cmpScenario(s string) string {
	if s == "" {
		return DefaultScenario
	}
	return s
}

// listScenarios are the scenario filter's values.
var listScenarios = []string{"SingleStream", "MultiStream", "Server", "Offline"}

// ParseListQuery checks the query of GET /v1/runs; errors are FieldErrors
// naming the parameter.
func ParseListQuery(q url.Values) (ListQuery, error) {
	lq := ListQuery{Limit: DefaultListLimit}
	for k, vs := range q {
		switch k {
		case "state", "limit", "page_token":
		case "model", "verdict", "scenario":
			if len(vs) > 1 {
				return ListQuery{}, fieldErr(k, "given %d times: give it once", len(vs))
			}
		default:
			return ListQuery{}, fieldErr(k, "unknown query parameter %q (want state, model, verdict, scenario, limit, page_token)", clip(k))
		}
	}
	for _, v := range q["state"] {
		for _, name := range strings.Split(v, ",") {
			st, err := ParseState(strings.TrimSpace(name))
			if err != nil {
				return ListQuery{}, fieldErr("state", "%q is not one of %v", clip(name), States())
			}
			lq.States = append(lq.States, st)
		}
	}
	if err := lq.parseFilters(q); err != nil {
		return ListQuery{}, err
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxListLimit {
			return ListQuery{}, fieldErr("limit", "must be an integer in [1, %d], got %q", MaxListLimit, clip(v))
		}
		lq.Limit = n
	}
	lq.PageToken = q.Get("page_token")
	if len(lq.PageToken) > 512 {
		return ListQuery{}, fieldErr("page_token", "too long")
	}
	return lq, nil
}

// parseFilters reads model, verdict and scenario.
func (lq *ListQuery) parseFilters(q url.Values) error {
	lq.Model = q.Get("model")
	if len(lq.Model) > maxNameLen {
		return fieldErr("model", "longer than %d bytes: no run's model is", maxNameLen)
	}
	if strings.ContainsFunc(lq.Model, unicode.IsControl) {
		return fieldErr("model", "contains a control character: no run's model does")
	}
	switch v := q.Get("verdict"); v {
	case "", VerdictValid, VerdictInvalid, VerdictNone:
		lq.Verdict = v
	default:
		return fieldErr("verdict", "%q is not %s, %s or %s (no verdict: not finished, failed, cancelled or N/A)", clip(v), VerdictValid, VerdictInvalid, VerdictNone)
	}
	lq.Scenario = q.Get("scenario")
	if lq.Scenario != "" && !slices.Contains(listScenarios, lq.Scenario) {
		return fieldErr("scenario", "%q is not one of %s (as the spec spells it)", clip(lq.Scenario), strings.Join(listScenarios, ", "))
	}
	return nil
}

// clip shortens a value quoted back in an error: a hostile query may be
// long.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

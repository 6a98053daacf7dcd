package api

import (
	"net/url"
	"strconv"
	"strings"
)

// Paging of GET /v1/runs.
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
)

// ListQuery is GET /v1/runs' query: ?state=running,done&limit=20&page_token=...
type ListQuery struct {
	// States filters by state; empty lists every run. Given as a
	// comma-separated list or the parameter repeated.
	States []State
	Limit  int
	// PageToken is opaque to clients: the daemon's next_page_token from
	// the previous page (a cursor, so new runs do not shift the pages).
	PageToken string
}

// ParseListQuery checks the query of GET /v1/runs; errors are FieldErrors
// naming the parameter.
func ParseListQuery(q url.Values) (ListQuery, error) {
	lq := ListQuery{Limit: DefaultListLimit}
	for k := range q {
		switch k {
		case "state", "limit", "page_token":
		default:
			return ListQuery{}, fieldErr(k, "unknown query parameter %q (want state, limit, page_token)", k)
		}
	}
	for _, v := range q["state"] {
		for _, name := range strings.Split(v, ",") {
			st, err := ParseState(strings.TrimSpace(name))
			if err != nil {
				return ListQuery{}, fieldErr("state", "%v", err)
			}
			lq.States = append(lq.States, st)
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxListLimit {
			return ListQuery{}, fieldErr("limit", "must be an integer in [1, %d], got %q", MaxListLimit, v)
		}
		lq.Limit = n
	}
	lq.PageToken = q.Get("page_token")
	if len(lq.PageToken) > 512 {
		return ListQuery{}, fieldErr("page_token", "too long")
	}
	return lq, nil
}

package metrics

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/outcome"
)

// Failed samples land on the counter of their outcome and nowhere else:
// not the completed counter, not the latency histogram.
func TestFailuresByOutcome(t *testing.T) {
	m, reg := newTest(t)
	o := m.Observer()
	fails := map[string]error{
		"unanswered":        loadgen.ErrUnanswered,
		"timeout":           context.DeadlineExceeded,
		"connection_closed": fmt.Errorf("%w: %w", kserve.ErrTransport, kserve.ErrConnectionClosed),
		"transport":         kserve.ErrTransport,
		"error":             kserve.ErrInternal,
		"malformed":         kserve.ErrMalformed,
		"too_large":         kserve.ErrTooLarge,
		"bad_response":      kserve.ErrBadResponse,
		"other":             errors.New("x"),
	}
	want := map[string]float64{}
	q := 0
	for name, err := range fails {
		n := len(name) // a distinct count per outcome
		o.Issued(q, n, 0)
		o.Completed(q, n, time.Millisecond, err)
		o.QueryDone(q, true)
		want[name] = float64(n)
		q++
	}
	if len(outcome.Outcomes()) != len(fails) {
		t.Fatalf("outcomes %v; the test covers %d", outcome.Outcomes(), len(fails))
	}
	for _, name := range outcome.Outcomes() {
		if got := value(t, reg, "loadgend_samples_failed_total", "outcome", name); got != want[name] {
			t.Errorf("failed{outcome=%q} = %v, want %v", name, got, want[name])
		}
	}
	if got := value(t, reg, "loadgend_samples_completed_total"); got != 0 {
		t.Errorf("completed = %v after failures only", got)
	}
	if h := hist(t, reg, "loadgend_sample_latency_seconds"); h.GetSampleCount() != 0 {
		t.Errorf("latency histogram counted %d failed samples", h.GetSampleCount())
	}
	if got := value(t, reg, "loadgend_queries_failed_total"); got != float64(q) {
		t.Errorf("queries failed = %v, want %d", got, q)
	}
}

// Failed samples are also counted by the status the server answered with,
// under the outcome-independent code label; one without a status under "".
func TestFailuresByCode(t *testing.T) {
	m, reg := newTest(t)
	o := m.Observer()
	fails := []struct {
		err  error
		n    int
		code string
	}{
		{&kserve.Error{Code: kserve.CodeFromHTTP(500), HTTPStatus: 500, Message: "boom"}, 3, "http_500"},
		{fmt.Errorf("q: %w", &kserve.Error{Code: kserve.CodeFromHTTP(500), HTTPStatus: 500}), 2, "http_500"},
		{&kserve.Error{Code: codes.Unavailable, Message: "overloaded"}, 4, "grpc_unavailable"},
		{&kserve.Error{HTTPStatus: 777}, 1, "http_other"},
		{loadgen.ErrUnanswered, 6, ""},
	}
	for q, f := range fails {
		o.Issued(q, f.n, 0)
		o.Completed(q, f.n, time.Millisecond, f.err)
		o.QueryDone(q, true)
	}
	want := map[string]float64{"http_500": 5, "grpc_unavailable": 4, "http_other": 1, "": 6}
	for code, n := range want {
		if got := value(t, reg, "loadgend_samples_failed_by_code_total", "code", code); got != n {
			t.Errorf("failed_by_code{code=%q} = %v, want %v", code, got, n)
		}
	}
	if got := len(series(t, reg, "loadgend_samples_failed_by_code_total")); got != len(want) {
		t.Errorf("%d code series, want %d (a series appears at its first failure)", got, len(want))
	}
	if got := value(t, reg, "loadgend_samples_failed_total", "outcome", "error"); got != 10 {
		t.Errorf("failed{outcome=error} = %v, want 10: the outcome series are unchanged", got)
	}
}

package metrics

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// The errors below are shaped as kserve's clients and pkg/sut produce them.
func TestClassify(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"drain timeout", loadgen.ErrUnanswered, "unanswered"},
		{"context deadline", fmt.Errorf("infer: %w", context.DeadlineExceeded), "timeout"},
		{"HTTP client timeout (also transport)", fmt.Errorf("%w: request timeout 1s: %w", kserve.ErrTransport, os.ErrDeadlineExceeded), "timeout"},
		{"HTTP context deadline (also transport)", fmt.Errorf("%w: %w", kserve.ErrTransport, context.DeadlineExceeded), "timeout"},
		{"server DEADLINE_EXCEEDED", kserve.Errorf(codes.DeadlineExceeded, "queued too long"), "timeout"},
		{"HTTP 504", &kserve.Error{Code: kserve.CodeFromHTTP(504), HTTPStatus: 504, Message: "gateway"}, "timeout"},
		{"connection refused", fmt.Errorf("%w: dial: connection refused", kserve.ErrTransport), "transport"},
		{"connection closed before the answer", fmt.Errorf("%w: %w: end of stream", kserve.ErrTransport, kserve.ErrConnectionClosed), "connection_closed"},
		{"timeout beats connection closed", fmt.Errorf("%w: %w: %w", kserve.ErrTransport, kserve.ErrConnectionClosed, context.DeadlineExceeded), "timeout"},
		{"transport with a status", fmt.Errorf("%w: %w", kserve.ErrTransport, kserve.Errorf(codes.Unavailable, "closing")), "transport"},
		{"server 503", kserve.Errorf(codes.Unavailable, "overloaded"), "error"},
		{"server 400 wrapped", fmt.Errorf("query 3: %w", kserve.Errorf(codes.InvalidArgument, "bad shape")), "error"},
		{"malformed response", kserve.Malformedf("output %q missing", "y"), "malformed"},
		{"bad response", fmt.Errorf("query 2: %w", kserve.NewExpect("m", nil, false).CheckJSON([]byte(`{"model_name":"m","outputs":[]}`), 1)), "bad_response"},
		{"cancelled", context.Canceled, "other"},
		{"anything else", errors.New("sut: sample 9 was not loaded"), "other"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Classify(c.err).String(); got != c.want {
				t.Errorf("Classify(%v) = %s, want %s", c.err, got, c.want)
			}
		})
	}
}

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
		"bad_response":      kserve.ErrBadResponse,
		"other":             errors.New("x"),
	}
	want := map[string]float64{}
	q := 0
	for outcome, err := range fails {
		n := len(outcome) // a distinct count per outcome
		o.Issued(q, n, 0)
		o.Completed(q, n, time.Millisecond, err)
		o.QueryDone(q, true)
		want[outcome] = float64(n)
		q++
	}
	if len(Outcomes()) != len(fails) {
		t.Fatalf("outcomes %v; the test covers %d", Outcomes(), len(fails))
	}
	for _, outcome := range Outcomes() {
		if got := value(t, reg, "loadgend_samples_failed_total", "outcome", outcome); got != want[outcome] {
			t.Errorf("failed{outcome=%q} = %v, want %v", outcome, got, want[outcome])
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

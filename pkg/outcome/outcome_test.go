package outcome

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

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
		{"answer too large", fmt.Errorf("query 4: %w", fmt.Errorf("%w: a body of 300000000 bytes", kserve.ErrTooLarge)), "too_large"},
		{"bad response", fmt.Errorf("query 2: %w", kserve.NewExpect("m", nil, false).CheckJSON([]byte(`{"model_name":"m","outputs":[]}`), 1)), "bad_response"},
		{"cancelled", context.Canceled, "other"},
		{"anything else", errors.New("sut: sample 9 was not loaded"), "other"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := Classify(c.err); got.String() != c.want {
				t.Errorf("Classify(%v) = %s, want %s", c.err, got, c.want)
			}
		})
	}
}

// The status is the one the server answered with, shown as the result and
// the metric label spell it; numbers outside the protocols' ranges fold into
// "other", so the value set stays fixed.
func TestClassifyStatus(t *testing.T) {
	cases := []struct {
		name          string
		err           error
		outcome       string
		status, label string
	}{
		{"HTTP 500", fmt.Errorf("query 1: %w", &kserve.Error{Code: kserve.CodeFromHTTP(500), HTTPStatus: 500, Message: "boom"}), "error", "HTTP 500", "http_500"},
		{"HTTP 504 is a timeout", &kserve.Error{Code: kserve.CodeFromHTTP(504), HTTPStatus: 504}, "timeout", "HTTP 504", "http_504"},
		{"HTTP 999", &kserve.Error{HTTPStatus: 999}, "error", "HTTP other", "http_other"},
		{"gRPC UNAVAILABLE", &kserve.Error{Code: codes.Unavailable, Message: "overloaded"}, "error", "gRPC UNAVAILABLE", "grpc_unavailable"},
		{"gRPC RESOURCE_EXHAUSTED", &kserve.Error{Code: codes.ResourceExhausted, Message: "queue full"}, "error", "gRPC RESOURCE_EXHAUSTED", "grpc_resource_exhausted"},
		{"gRPC code 99", &kserve.Error{Code: codes.Code(99)}, "error", "gRPC other", "grpc_other"},
		{"transport with a status", fmt.Errorf("%w: %w", kserve.ErrTransport, &kserve.Error{Code: codes.Unavailable}), "transport", "gRPC UNAVAILABLE", "grpc_unavailable"},
		{"no answer", fmt.Errorf("%w: dial: connection refused", kserve.ErrTransport), "transport", "", ""},
		{"unanswered", loadgen.ErrUnanswered, "unanswered", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, st := Classify(c.err)
			if o.String() != c.outcome || st.String() != c.status || st.Label() != c.label {
				t.Errorf("Classify(%v) = %s, %q (label %q); want %s, %q (%q)", c.err, o, st, st.Label(), c.outcome, c.status, c.label)
			}
			if on, sn := Names(c.err); on != c.outcome || sn != c.status {
				t.Errorf("Names = %q, %q", on, sn)
			}
		})
	}
}

// The label set is fixed: none, 500 HTTP statuses and their other, 17 gRPC
// codes and their other; each value distinct.
func TestLabels(t *testing.T) {
	ls := Labels()
	if len(ls) != 1+500+1+17+1 || ls[0] != "" {
		t.Fatalf("%d labels, first %q", len(ls), ls[0])
	}
	seen := map[string]bool{}
	for _, l := range ls {
		if seen[l] {
			t.Errorf("label %q twice", l)
		}
		seen[l] = true
	}
	for _, want := range []string{"http_100", "http_599", "grpc_ok", "grpc_unauthenticated", "grpc_deadline_exceeded"} {
		if !seen[want] {
			t.Errorf("no label %q", want)
		}
	}
}

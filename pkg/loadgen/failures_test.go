package loadgen

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// statusErr stands for a server's error answer; statusClassifier classifies
// it as pkg/outcome would.
type statusErr struct{ status string }

func (e statusErr) Error() string { return "server: " + e.status + ": boom" }

func statusClassifier(err error) (string, string) {
	if se, ok := errors.AsType[statusErr](err); ok {
		return "error", se.status
	}
	return defaultClassifier(err)
}

// rateAdvice are the recommendations that change the rate or the latency.
var rateAdvice = []string{recPerfServer, recMinDurationServer, recEarlyStopping}

// A server answering every request with HTTP 500 fails every sample: the
// run counts them under one kind with the first message, completes nothing
// per second, and its advice is about the failures, never the rate.
func TestAllFailedIsAboutFailures(t *testing.T) {
	for _, rs := range []Ruleset{RulesetV05, RulesetLoadGen6} {
		for _, early := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s early verdict %v", rs, early), func(t *testing.T) {
				s := testSettings(t, rs, trace.Server)
				s.Engine.EarlyVerdict = early
				s.MinDurationMs = 600 // long enough for early stopping to pass were every sample answered
				sut := &fakeSUT{clock: newFakeClock(), latency: constLatency(time.Millisecond), inline: early,
					fail: func(int) error { return fmt.Errorf("infer: %w", statusErr{"HTTP 500"}) }}
				_, res := execute(t, s, sut, WithFailureClassifier(statusClassifier))
				if early != (res.EndReason == StopEarlyVerdict) {
					t.Fatalf("early verdict %v, ended %s", early, res.EndReason)
				}
				want := []Failure{{Outcome: "error", Status: "HTTP 500", Count: res.SamplesIssued, Example: "infer: server: HTTP 500: boom"}}
				if !slices.Equal(res.Failures, want) {
					t.Errorf("failures %+v, want %+v", res.Failures, want)
				}
				if res.SamplesCompleted != 0 || res.CompletedSamplesPerSec != 0 || res.Valid {
					t.Errorf("%d completed, %.2f/s, valid %v", res.SamplesCompleted, res.CompletedSamplesPerSec, res.Valid)
				}
				for _, rec := range res.Recommendations {
					if slices.Contains(rateAdvice, rec) || strings.Contains(strings.ToLower(rec), "qps") {
						t.Errorf("advice %q when failures, not latency, made the run INVALID; all: %q (reasons %q)", rec, res.Recommendations, res.InvalidReasons)
					}
				}
				if !slices.Contains(res.Recommendations, recFailed) {
					t.Errorf("advice %q does not name the failures", res.Recommendations)
				}
			})
		}
	}
}

// When the answered samples are over the bound too, the latency advice
// stays: failures are not all that is wrong.
func TestFailuresAndLatencyKeepLatencyAdvice(t *testing.T) {
	s := testSettings(t, RulesetV05, trace.Server)
	sut := &fakeSUT{clock: newFakeClock(), latency: constLatency(20 * time.Millisecond), fail: func(id int) error {
		if id%10 == 0 {
			return statusErr{"HTTP 503"}
		}
		return nil
	}}
	_, res := execute(t, s, sut, WithFailureClassifier(statusClassifier))
	if !slices.Contains(res.Recommendations, recPerfServer) || !slices.Contains(res.Recommendations, recFailed) {
		t.Errorf("advice %q, want both the latency's and the failures'", res.Recommendations)
	}
	if len(res.Failures) != 1 || res.Failures[0].Status != "HTTP 503" || res.Failures[0].Count != res.SamplesFailed {
		t.Errorf("failures %+v of %d", res.Failures, res.SamplesFailed)
	}
}

// A server answering with ever new statuses cannot grow the failure list
// past MaxFailureKinds: the rest are counted under "other", every failed
// sample still counted once; kinds come most first.
func TestFailureKindsBounded(t *testing.T) {
	s := testSettings(t, RulesetV05, trace.Server)
	sut := &fakeSUT{clock: newFakeClock(), latency: constLatency(time.Millisecond), fail: func(id int) error {
		if id%2 == 0 {
			return statusErr{"HTTP 500"} // the most frequent kind
		}
		return statusErr{fmt.Sprintf("HTTP %d", id)} // a new kind each time
	}}
	_, res := execute(t, s, sut, WithFailureClassifier(statusClassifier))
	if len(res.Failures) != MaxFailureKinds {
		t.Fatalf("%d kinds, want the bound %d", len(res.Failures), MaxFailureKinds)
	}
	var total int64
	for i, f := range res.Failures {
		total += f.Count
		if i > 0 && f.Count > res.Failures[i-1].Count {
			t.Errorf("kind %d (%d) after one of %d: not sorted by count", i, f.Count, res.Failures[i-1].Count)
		}
	}
	if total != res.SamplesFailed || total != res.SamplesIssued {
		t.Errorf("kinds add up to %d; %d failed of %d", total, res.SamplesFailed, res.SamplesIssued)
	}
	if f := res.Failures[0]; f.Status != "HTTP 500" || f.Count != (res.SamplesIssued+1)/2 {
		t.Errorf("first kind %+v, want HTTP 500 with half the samples", f)
	}
	i := slices.IndexFunc(res.Failures, func(f Failure) bool { return f.Outcome == OverflowOutcome && f.Status == "" })
	if i < 0 || res.Failures[i].Count != res.SamplesIssued/2-(MaxFailureKinds-2) {
		t.Errorf("no overflow kind with the rest: %+v", res.Failures)
	}
}

// An example message is cut to a bound, on a character boundary.
func TestFailureExampleClipped(t *testing.T) {
	long := strings.Repeat("é", maxExampleBytes) // two bytes each
	got := clip(long)
	if len(got) > maxExampleBytes+len("…") || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("clip gave %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if clip("short") != "short" {
		t.Error("a short message was changed")
	}
}

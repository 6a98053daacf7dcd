package loadgen

import (
	"errors"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

func TestIssuersRefusedForOneSequenceOfQueries(t *testing.T) {
	for _, sc := range []trace.Scenario{trace.SingleStream, trace.MultiStream} {
		s := DefaultSettings(RulesetLoadGen6)
		s.Scenario, s.Engine.Issuers = sc, 2
		err := s.Validate()
		if !errors.Is(err, trace.ErrInvalidSettings) || !strings.Contains(err.Error(), "issuers") || !strings.Contains(err.Error(), "one sequence of queries") {
			t.Errorf("%s with 2 issuers: %v, want a refusal naming issuers and why", sc, err)
		}
	}
	for _, tc := range []struct {
		sc          trace.Scenario
		concurrency int
	}{{trace.Server, 0}, {trace.Offline, 0}, {trace.SingleStream, 4}} {
		s := DefaultSettings(RulesetLoadGen6)
		s.Scenario, s.Engine.Issuers, s.Engine.Concurrency = tc.sc, 2, tc.concurrency
		if err := s.Validate(); err != nil {
			t.Errorf("%s (concurrency %d) with 2 issuers: %v", tc.sc, tc.concurrency, err)
		}
	}
	s := DefaultSettings(RulesetLoadGen6)
	s.Scenario, s.Engine.Issuers = trace.Server, MaxIssuers+1
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "issuers") {
		t.Errorf("issuers %d: %v, want a refusal", MaxIssuers+1, err)
	}
}

func TestIssuersNeedASUTEach(t *testing.T) {
	s := DefaultSettings(RulesetLoadGen6)
	s.Scenario, s.Engine.Issuers = trace.Offline, 3
	_, err := NewRun(s, &fakeSUT{}, &fakeQSL{total: 10, perf: 10}, WithIssuerSUTs(&fakeSUT{}))
	if !errors.Is(err, trace.ErrInvalidSettings) || !strings.Contains(err.Error(), "3 issuers need 2 SUTs") {
		t.Errorf("3 issuers with 2 SUTs: %v", err)
	}
}

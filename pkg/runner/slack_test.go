package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

func TestIssueSlackFor(t *testing.T) {
	server := func(qps float64, boundMs uint64) loadgen.Settings {
		s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
		s.Scenario = trace.Server
		s.ServerTargetQPS, s.ServerTargetLatencyNs = qps, boundMs*1e6
		return s
	}
	issuers := func(s loadgen.Settings, n int) loadgen.Settings { s.Engine.Issuers = n; return s }
	offline := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	offline.Scenario = trace.Offline
	for _, c := range []struct {
		name string
		s    loadgen.Settings
		want time.Duration
	}{
		{"20k QPS, 10 ms bound: 5% of it, the cap", server(20000, 10), 500 * time.Microsecond},
		{"20k QPS, 100 ms bound: the cap", server(20000, 100), 500 * time.Microsecond},
		{"50k QPS: ten gaps", server(50000, 10), 200 * time.Microsecond},
		{"100k QPS: ten gaps", server(100000, 10), 100 * time.Microsecond},
		{"1 ms bound: 5% of it", server(1000, 1), 50 * time.Microsecond},
		{"100 QPS: the cap (long waits have none)", server(100, 100), 500 * time.Microsecond},
		{"Offline: the thread's own", offline, 0},
		{"100k QPS, 2 issuers: ten of each one's gaps", issuers(server(100000, 10), 2), 200 * time.Microsecond},
		{"100k QPS, 4 issuers: ten gaps, 400 µs", issuers(server(100000, 10), 4), 400 * time.Microsecond},
		{"20k QPS, 2 issuers: still the cap", issuers(server(20000, 10), 2), 500 * time.Microsecond},
	} {
		if got := IssueSlackFor(c.s); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A slack out of range is refused before anything is dialled.
func TestIssueSlackOutOfRangeIsRefused(t *testing.T) {
	s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	s.Scenario = trace.Server
	s.ServerTargetQPS = 10
	for _, slack := range []time.Duration{-time.Microsecond, MaxIssueSlack + 1} {
		spec := Spec{Target: "http://127.0.0.1:1", Model: "m", Settings: s, IssueSlack: slack}
		_, err := Run(t.Context(), spec, Options{})
		if err == nil || !strings.Contains(err.Error(), "issue slack") {
			t.Errorf("slack %v: error %v, want one naming the issue slack", slack, err)
		}
	}
}

package trace

import (
	"errors"
	"testing"
)

func TestEffectiveSettings(t *testing.T) {
	qsl := QSL{TotalSampleCount: 5000, PerformanceSampleCount: 1024}
	tests := []struct {
		name   string
		modify func(*Requested)
		check  func(*testing.T, Effective)
	}{
		{"SingleStream qps from expected latency", func(s *Requested) {
			s.SingleStreamExpectedLatencyNs = 4_000_000
		}, func(t *testing.T, e Effective) {
			want(t, "TargetQPS", e.TargetQPS, 250.0)
			want(t, "SamplesPerQuery", e.SamplesPerQuery, uint64(1))
			want(t, "MaxAsyncQueries", e.MaxAsyncQueries, uint64(1))
			want(t, "TargetDurationMs", e.TargetDurationMs, uint64(10000))
		}},
		{"MultiStream spq and qps", func(s *Requested) {
			s.Scenario = MultiStream
			s.MultiStreamSamplesPerQuery = 4
			s.MinQueryCount = 662
		}, func(t *testing.T, e Effective) {
			want(t, "TargetQPS", e.TargetQPS, 125.0)
			want(t, "SamplesPerQuery", e.SamplesPerQuery, uint64(4))
			want(t, "MinSampleCount", e.MinSampleCount, uint64(662*4))
		}},
		{"Server keeps its latency bound", func(s *Requested) {
			s.Scenario = Server
			s.ServerTargetQPS = 77.5
			s.ServerTargetLatencyNs = 15_000_000
		}, func(t *testing.T, e Effective) {
			want(t, "TargetQPS", e.TargetQPS, 77.5)
			want(t, "TargetLatencyNs", e.TargetLatencyNs, uint64(15_000_000))
			want(t, "MaxAsyncQueries", e.MaxAsyncQueries, uint64(0))
		}},
		{"Offline spq from slack when above min_query_count", func(s *Requested) {
			s.Scenario = Offline
			s.OfflineExpectedQPS = 1000
			s.MinDurationMs = 60000
		}, func(t *testing.T, e Effective) {
			want(t, "SamplesPerQuery", e.SamplesPerQuery, uint64(66000)) // 1.1 * 60 s * 1000
			want(t, "MinQueryCount", e.MinQueryCount, uint64(1))
			want(t, "TargetDurationMs", e.TargetDurationMs, uint64(0))
			want(t, "MinDurationMs", e.MinDurationMs, uint64(60000))
		}},
		{"Offline spq truncates the slack product", func(s *Requested) {
			s.Scenario = Offline
			s.OfflineExpectedQPS = 33.3
			s.MinQueryCount = 1
		}, func(t *testing.T, e Effective) {
			want(t, "SamplesPerQuery", e.SamplesPerQuery, uint64(366)) // 366.3
		}},
		{"Offline issue unique uses the performance count", func(s *Requested) {
			s.Scenario = Offline
			s.PerformanceIssueUnique = true
			s.PerformanceSampleCountOverride = 300
		}, func(t *testing.T, e Effective) {
			want(t, "SamplesPerQuery", e.SamplesPerQuery, uint64(300))
			want(t, "PerformanceSampleCount", e.PerformanceSampleCount, uint64(300))
		}},
		{"SingleStream equal issue rounds to whole passes of the QSL count", func(s *Requested) {
			s.SampleConcatenatePermutation = true
			s.SingleStreamExpectedLatencyNs = 10_000_000 // 100 qps: 2*10 s*100 = 2000
			s.PerformanceSampleCountOverride = 7         // ignored by the rounding
		}, func(t *testing.T, e Effective) {
			want(t, "MinQueryCount", e.MinQueryCount, uint64(2048))
		}},
		{"SingleStream equal issue adds a pass even on a multiple", func(s *Requested) {
			s.SampleConcatenatePermutation = true
			s.MinDurationMs = 0
			s.MinQueryCount = 2048
		}, func(t *testing.T, e Effective) {
			want(t, "MinQueryCount", e.MinQueryCount, uint64(3072))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := DefaultSettings()
			tc.modify(&req)
			e, err := EffectiveSettings(req, qsl)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, e)
		})
	}
}

func want[T comparable](t *testing.T, field string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", field, got, want)
	}
}

func TestEffectiveSettingsRejects(t *testing.T) {
	qsl := QSL{TotalSampleCount: 100, PerformanceSampleCount: 50}
	tests := []struct {
		name   string
		modify func(*Requested, *QSL)
	}{
		{"zero latency", func(s *Requested, _ *QSL) { s.SingleStreamExpectedLatencyNs = 0 }},
		{"negative server qps", func(s *Requested, _ *QSL) { s.Scenario = Server; s.ServerTargetQPS = -1 }},
		{"zero offline qps", func(s *Requested, _ *QSL) { s.Scenario = Offline; s.OfflineExpectedQPS = 0 }},
		{"zero spq", func(s *Requested, _ *QSL) { s.Scenario = MultiStream; s.MultiStreamSamplesPerQuery = 0 }},
		{"empty QSL", func(_ *Requested, q *QSL) { q.TotalSampleCount = 0 }},
		{"zero performance count", func(_ *Requested, q *QSL) { q.PerformanceSampleCount = 0 }},
		{"unique and same", func(s *Requested, _ *QSL) { s.PerformanceIssueUnique, s.PerformanceIssueSame = true, true }},
		{"same index past the loaded set", func(s *Requested, _ *QSL) {
			s.PerformanceIssueSame = true
			s.PerformanceIssueSameIndex = 50
		}},
		{"unknown scenario", func(s *Requested, _ *QSL) { s.Scenario = Scenario(9) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, q := DefaultSettings(), qsl
			tc.modify(&req, &q)
			if _, err := EffectiveSettings(req, q); !errors.Is(err, ErrInvalidSettings) {
				t.Fatalf("err = %v, want ErrInvalidSettings", err)
			}
		})
	}
}

func TestParseScenario(t *testing.T) {
	for _, s := range []Scenario{SingleStream, MultiStream, Server, Offline} {
		got, err := ParseScenario(s.String())
		if err != nil || got != s {
			t.Errorf("ParseScenario(%q) = %v, %v", s.String(), got, err)
		}
	}
	if _, err := ParseScenario("server"); !errors.Is(err, ErrInvalidSettings) {
		t.Errorf("lower-case name accepted: %v", err)
	}
}

func TestFormatQPS(t *testing.T) {
	// What `std::cout << double` prints (default precision 6, %g rules).
	tests := []struct {
		v    float64
		want string
	}{
		{1000, "1000"},
		{125, "125"},
		{0.5, "0.5"},
		{37.5, "37.5"},
		{12345.6, "12345.6"},
		{123456.7, "123457"},
		{1e6, "1e+06"},
		{1234567, "1.23457e+06"},
		{1e-5, "1e-05"},
		{0.0001, "0.0001"},
		{1.0 / 3, "0.333333"},
		{1e9 / 3e6, "333.333"},
		{100000, "100000"},
	}
	for _, tc := range tests {
		if got := FormatQPS(tc.v); got != tc.want {
			t.Errorf("FormatQPS(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

package mlperflog

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// rule is LoadGen's 48-'=' separator, spelled out so a change of the
// package constant cannot silently change the expectations.
const rule = "================================================"

// loadgenPart returns the summary up to netloadgen's section: the part that
// must be byte for byte LoadGen's.
func loadgenPart(t *testing.T, out string) string {
	t.Helper()
	marker := "\n" + rule + "\n" + NetworkSectionTitle + "\n"
	i := strings.Index(out, marker)
	if i < 0 {
		t.Fatalf("netloadgen section missing:\n%s", out)
	}
	return out[:i]
}

func writeSummaryString(t *testing.T, s *Summary) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSummary(&b, s); err != nil {
		t.Fatalf("WriteSummary: %v", err)
	}
	return b.String()
}

// TestSummaryMatchesReferenceExample rebuilds LOADGEN-REFERENCE.md §6.1's
// full example (copied verbatim into testdata) from its numbers.
func TestSummaryMatchesReferenceExample(t *testing.T) {
	want, err := os.ReadFile("testdata/reference_server_summary.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := loadgenPart(t, writeSummaryString(t, referenceServerSummary(t)))
	if got != string(want) {
		t.Errorf("summary differs from the reference example\n got:\n%s\nwant:\n%s", got, want)
	}
}

// The other scenarios' layouts, assembled from §6.1's per-scenario notes
// (headline lines, early-stopping block, QPS lines, per-query block).
func TestSummaryScenarioLayouts(t *testing.T) {
	params := func(spq, qps, lat, async, minq, perf string) string {
		return "\n" + rule + "\nTest Parameters Used\n" + rule + "\n" +
			"samples_per_query : " + spq + "\n" +
			"target_qps : " + qps + "\n" +
			"target_latency (ns): " + lat + "\n" +
			"max_async_queries : " + async + "\n" +
			"min_duration (ms): 10000\nmax_duration (ms): 0\n" +
			"min_query_count : " + minq + "\nmax_query_count : 0\n" +
			"qsl_rng_seed : 2085463073848966840\nsample_index_rng_seed : 2747215439041700203\n" +
			"schedule_rng_seed : 16159082839903944936\naccuracy_log_rng_seed : 0\n" +
			"accuracy_log_probability : 0\naccuracy_log_sampling_target : 0\nprint_timestamps : 0\n" +
			"performance_issue_unique : 0\nperformance_issue_same : 0\nperformance_issue_same_index : 0\n" +
			"performance_sample_count : " + perf + "\naccuracy_sample_count : 1024\n"
	}
	table := "Min latency (ns)                : 900000\n" +
		"Max latency (ns)                : 2000000\n" +
		"Mean latency (ns)               : 1058000\n" +
		"50.00 percentile latency (ns)   : 1050000\n" +
		"90.00 percentile latency (ns)   : 1070000\n" +
		"95.00 percentile latency (ns)   : 1080000\n" +
		"97.00 percentile latency (ns)   : 1090000\n" +
		"99.00 percentile latency (ns)   : 1110000\n" +
		"99.90 percentile latency (ns)   : 1500000\n"
	lat := LatencyStats{Min: 900000, Max: 2000000, Mean: 1058000,
		P: [6]time.Duration{1050000, 1070000, 1080000, 1090000, 1110000, 1500000}}
	footer := "\nNo warnings encountered during test.\n\nNo errors encountered during test.\n"

	tests := []struct {
		name string
		s    func(t *testing.T) *Summary
		want string
	}{{
		name: "SingleStream valid",
		s: func(t *testing.T) *Summary {
			return &Summary{
				SUTName:                   "Demo Network SUT",
				Settings:                  effective(t, func(s *trace.Requested) { s.Scenario = trace.SingleStream }),
				TargetPercentileLatency:   1070000,
				QPSWithLoadgenOverhead:    932.9149,
				QPSWithoutLoadgenOverhead: 945.0462,
				MinDurationMet:            true,
				MinQueriesMet:             true,
				EarlyStopping: EarlyStopping{
					Estimate:   &stats.PercentileEstimate{Met: true, Queries: 9331, MinQueries: 64, Discarded: 864, Latency: 1076145},
					Estimate99: &stats.PercentileEstimate{Met: true, Queries: 9331, MinQueries: 662, Discarded: 60, Latency: 1113508},
				},
				QueryCount:      9331,
				SampleLatencies: lat,
			}
		},
		want: rule + "\nMLPerf Results Summary\n" + rule + "\n" +
			"SUT name : Demo Network SUT\nScenario : SingleStream\nMode     : PerformanceOnly\n" +
			"90.0th percentile latency (ns) : 1070000\n" +
			"Result is : VALID\n  Min duration satisfied : Yes\n  Min queries satisfied : Yes\n  Early stopping satisfied: Yes\n" +
			"Early Stopping Result:\n" +
			" * Processed at least 64 queries (9331).\n" +
			" * Would discard 864 highest latency queries.\n" +
			" * Early stopping 90.0th percentile estimate: 1076145\n" +
			" * Early stopping 99.0th percentile estimate: 1113508\n" +
			"\n" + rule + "\nAdditional Stats\n" + rule + "\n" +
			"QPS w/ loadgen overhead         : 932.91\n" +
			"QPS w/o loadgen overhead        : 945.05\n" +
			"\n" + table +
			params("1", "1000", "0", "1", "100", "1024") + footer,
	}, {
		name: "SingleStream too few queries for p99",
		s: func(t *testing.T) *Summary {
			return &Summary{
				SUTName:                 "x",
				Settings:                effective(t, func(s *trace.Requested) { s.Scenario = trace.SingleStream }),
				TargetPercentileLatency: 1070000,
				MinDurationMet:          true,
				MinQueriesMet:           true,
				EarlyStopping: EarlyStopping{
					Estimate:   &stats.PercentileEstimate{Met: true, Queries: 100, MinQueries: 64, Discarded: 2, Latency: 1090000},
					Estimate99: &stats.PercentileEstimate{Queries: 100, MinQueries: 662},
				},
				SampleLatencies: lat,
			}
		},
		want: rule + "\nMLPerf Results Summary\n" + rule + "\n" +
			"SUT name : x\nScenario : SingleStream\nMode     : PerformanceOnly\n" +
			"90.0th percentile latency (ns) : 1070000\n" +
			"Result is : VALID\n  Min duration satisfied : Yes\n  Min queries satisfied : Yes\n  Early stopping satisfied: Yes\n" +
			"Early Stopping Result:\n" +
			" * Processed at least 64 queries (100).\n" +
			" * Would discard 2 highest latency queries.\n" +
			" * Early stopping 90.0th percentile estimate: 1090000\n" +
			" * Not enough queries processed for 99.0th percentile\n" +
			" early stopping estimate (would need to process at\n" +
			" least 662 total queries).\n" +
			"\n" + rule + "\nAdditional Stats\n" + rule + "\n" +
			"QPS w/ loadgen overhead         : 0.00\n" +
			"QPS w/o loadgen overhead        : 0.00\n" +
			"\n" + table +
			params("1", "1000", "0", "1", "100", "1024") + footer,
	}, {
		name: "MultiStream invalid: short and too few queries",
		s: func(t *testing.T) *Summary {
			return &Summary{
				SUTName: "x",
				Settings: effective(t, func(s *trace.Requested) {
					s.Scenario = trace.MultiStream
				}),
				TargetPercentileLatency: 1500000,
				MinDurationMet:          false,
				MinQueriesMet:           true,
				EarlyStopping: EarlyStopping{
					Estimate: &stats.PercentileEstimate{Queries: 100, MinQueries: 662},
				},
				QueryLatencies: lat,
				Errors:         2,
				Warnings:       1,
			}
		},
		want: rule + "\nMLPerf Results Summary\n" + rule + "\n" +
			"SUT name : x\nScenario : MultiStream\nMode     : PerformanceOnly\n" +
			"99.0th percentile latency (ns) : 1500000\n" +
			"Result is : INVALID\n  Min duration satisfied : NO\n  Min queries satisfied : Yes\n  Early stopping satisfied: NO\n" +
			"Recommendations:\n" +
			" * Decrease the expected latency so the loadgen pre-generates more queries.\n" +
			"Early Stopping Result:\n" +
			" * Only processed 100 queries.\n" +
			" * Need to process at least 662 queries for early stopping.\n" +
			"\n" + rule + "\nAdditional Stats\n" + rule + "\n" +
			"Per-query latency:  \n" + table +
			params("8", "125", "0", "1", "100", "1024") +
			"\n1 warning encountered. See detailed log.\n\n2 ERRORS encountered. See detailed log.\n",
	}, {
		name: "Server invalid: latency, early stopping and min queries",
		s: func(t *testing.T) *Summary {
			s := referenceServerSummary(t)
			s.PerfConstraintsMet = false
			s.MinQueriesMet = false
			s.EarlyStopping.Server = &stats.ServerEarlyStopping{Queries: 10034, OverLatency: 500, Required: 12000}
			s.Errors = 1
			return s
		},
		want: rule + "\nMLPerf Results Summary\n" + rule + "\n" +
			"SUT name : NullSUT\nScenario : Server\nMode     : PerformanceOnly\n" +
			"Completed samples per second    : 1003.26\n" +
			"Result is : INVALID\n  Performance constraints satisfied : NO\n" +
			"  Min duration satisfied : Yes\n  Min queries satisfied : NO\n  Early stopping satisfied: NO\n" +
			"Recommendations:\n" +
			" * Reduce target QPS to improve latency.\n" +
			" * The test exited early, before enough queries were issued.\n" +
			"   See the detailed log for why this may have occurred.\n" +
			"Early Stopping Result:\n" +
			" * Run unsuccessful.\n * Processed 10034 queries.\n" +
			" * Would need to run at least 1966 more queries,\n" +
			" with the run being successful if every additional\n query were under latency.\n" +
			"\n" + rule + "\nAdditional Stats\n" + rule + "\n" +
			"Scheduled samples per second : 1003.27\n" +
			"Min latency (ns)                : 612\n" +
			"Max latency (ns)                : 1333001\n" +
			"Mean latency (ns)               : 58281\n" +
			"50.00 percentile latency (ns)   : 61005\n" +
			"90.00 percentile latency (ns)   : 78717\n" +
			"95.00 percentile latency (ns)   : 88881\n" +
			"97.00 percentile latency (ns)   : 96644\n" +
			"99.00 percentile latency (ns)   : 118923\n" +
			"99.90 percentile latency (ns)   : 264421\n" +
			params("1", "1000", "100000000", "0", "100", "1024") +
			"\nNo warnings encountered during test.\n\n1 ERROR encountered. See detailed log.\n",
	}, {
		name: "Offline valid",
		s: func(t *testing.T) *Summary {
			return &Summary{
				SUTName: "x",
				Settings: effective(t, func(s *trace.Requested) {
					s.Scenario = trace.Offline
					s.OfflineExpectedQPS = 100
				}),
				SamplesPerSecond: 24333333.3,
				MinDurationMet:   true,
				MinQueriesMet:    true,
				SampleLatencies:  lat,
			}
		},
		want: rule + "\nMLPerf Results Summary\n" + rule + "\n" +
			"SUT name : x\nScenario : Offline\nMode     : PerformanceOnly\n" +
			"Samples per second: 2.43333e+07\n" +
			"Result is : VALID\n  Min duration satisfied : Yes\n  Min queries satisfied : Yes\n  Early stopping satisfied: Yes\n" +
			"\n" + rule + "\nAdditional Stats\n" + rule + "\n" + table +
			params("1100", "100", "0", "1", "1", "1024") + footer,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := loadgenPart(t, writeSummaryString(t, tc.s(t)))
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// Failed samples make the run INVALID with a reason in LoadGen's
// Recommendations list; the counts go in netloadgen's section only.
func TestSummaryNetworkSection(t *testing.T) {
	s := referenceServerSummary(t)
	s.SUTName = "Demo Network SUT\nResult is : VALID" // a hostile name stays on its line
	s.Network = Network{
		Ruleset:       "loadgen6",
		FailedSamples: 3,
		FirstErrors:   []string{"sample 7: connection refused", "sample 9: HTTP 503\nScenario : Offline"},
		IssueLateness: &LatencyStats{Min: 1, Max: 900, Mean: 20, P: [6]time.Duration{10, 20, 30, 40, 50, 60}},
		Constraints:   []Constraint{{Name: "skipped intervals", Met: false, Recommendation: "Fewer than 1% of queries may skip an interval."}},
		Extra:         []Field{{Key: "protocol", Value: "grpc"}},
		Headlines:     []Field{{Key: "Early verdict", Value: "stopped early at 1.2 s\nResult is : VALID"}},
	}
	out := writeSummaryString(t, s)
	lg := loadgenPart(t, out)
	for _, want := range []string{
		"SUT name : Demo Network SUT Result is : VALID\n",
		"Result is : INVALID\n",
		"Recommendations:\n * netloadgen: 3 samples failed (network or server errors); a run with failed samples is invalid.\n" +
			" * netloadgen: Fewer than 1% of queries may skip an interval.\nEarly Stopping Result:\n",
	} {
		if !strings.Contains(lg, want) {
			t.Errorf("LoadGen part lacks %q:\n%s", want, lg)
		}
	}
	wantNet := "\n" + rule + "\n" + NetworkSectionTitle + "\n" + rule + "\n" +
		"Ruleset : loadgen6\n" +
		"Early verdict : stopped early at 1.2 s Result is : VALID\n" +
		"Failed samples : 3\n" +
		"  (failed samples count as over every latency bound; in the tables above their latency is 9223372036854775807)\n" +
		"First errors:\n * sample 7: connection refused\n * sample 9: HTTP 503 Scenario : Offline\n" +
		"Constraint skipped intervals satisfied : NO\n" +
		"In readable units:\n" +
		"  sample latency : min 612 ns, mean 58.3 µs, p50 61.0 µs, p90 78.7 µs, p99 119 µs, max 1.33 ms\n" +
		"  issue lateness : min 1 ns, mean 20 ns, p50 10 ns, p90 20 ns, p99 50 ns, max 900 ns\n" +
		"Issue lateness, actual issue time minus scheduled time:\n" +
		"  Min issue lateness (ns)      : 1\n" +
		"  Max issue lateness (ns)      : 900\n" +
		"  Mean issue lateness (ns)     : 20\n" +
		"  50.00 percentile issue lateness (ns) : 10\n" +
		"  90.00 percentile issue lateness (ns) : 20\n" +
		"  95.00 percentile issue lateness (ns) : 30\n" +
		"  97.00 percentile issue lateness (ns) : 40\n" +
		"  99.00 percentile issue lateness (ns) : 50\n" +
		"  99.90 percentile issue lateness (ns) : 60\n" +
		"  protocol : grpc\n"
	if got := out[len(lg):]; got != wantNet {
		t.Errorf("network section:\n%s\nwant:\n%s", got, wantNet)
	}
	if n := strings.Count(out, "\nResult is"); n != 1 {
		t.Errorf("%d lines start with Result is, want 1", n)
	}
}

func TestSummaryValidity(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Summary)
		valid  bool
	}{
		{"all met", func(*Summary) {}, true},
		{"min duration", func(s *Summary) { s.MinDurationMet = false }, false},
		{"min queries", func(s *Summary) { s.MinQueriesMet = false }, false},
		{"perf constraints", func(s *Summary) { s.PerfConstraintsMet = false }, false},
		{"early stopping", func(s *Summary) { s.EarlyStopping.Server = &stats.ServerEarlyStopping{} }, false},
		{"failed samples", func(s *Summary) { s.Network.FailedSamples = 1 }, false},
		{"constraint met", func(s *Summary) { s.Network.Constraints = []Constraint{{Name: "c", Met: true}} }, true},
		{"constraint unmet", func(s *Summary) { s.Network.Constraints = []Constraint{{Name: "c"}} }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := referenceServerSummary(t)
			tc.mutate(s)
			if got := s.Valid(); got != tc.valid {
				t.Errorf("Valid() = %v, want %v", got, tc.valid)
			}
			out := writeSummaryString(t, s)
			want := "\nResult is : INVALID\n"
			if tc.valid {
				want = "\nResult is : VALID\n"
			}
			if !strings.Contains(out, want) {
				t.Errorf("summary lacks %q", want)
			}
		})
	}
}

func TestSummaryRejectsBadInput(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Summary) *Summary
	}{
		{"nil", func(*Summary) *Summary { return nil }},
		{"scenario", func(s *Summary) *Summary { s.Settings.Scenario = 9; return s }},
		{"mode", func(s *Summary) *Summary { s.Settings.Mode = -1; return s }},
		{"server without early stopping", func(s *Summary) *Summary { s.EarlyStopping.Server = nil; return s }},
		{"single stream without estimate", func(s *Summary) *Summary {
			s.Settings.Scenario = trace.SingleStream
			return s
		}},
		{"single stream without p99 estimate", func(s *Summary) *Summary {
			s.Settings.Scenario = trace.SingleStream
			s.EarlyStopping.Estimate = &stats.PercentileEstimate{Met: true}
			return s
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := WriteSummary(&b, tc.mutate(referenceServerSummary(t)))
			if !errors.Is(err, ErrInvalidSummary) {
				t.Fatalf("err = %v, want ErrInvalidSummary", err)
			}
			if b.Len() != 0 {
				t.Errorf("wrote %d bytes on error", b.Len())
			}
		})
	}
}

func TestSummaryFooterOnly(t *testing.T) {
	var b bytes.Buffer
	if err := WriteSummaryFooter(&b, 0, 3); err != nil {
		t.Fatal(err)
	}
	want := "\nNo warnings encountered during test.\n\n3 ERRORS encountered. See detailed log.\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestSummaryNonFiniteNumbers(t *testing.T) {
	s := referenceServerSummary(t)
	s.CompletedSamplesPerSecond = mathNaN()
	s.ScheduledSamplesPerSecond = mathInf()
	out := writeSummaryString(t, s)
	for _, want := range []string{"Completed samples per second    : nan\n", "Scheduled samples per second : inf\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}

func TestReadable(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0 ns"}, {999, "999 ns"}, {1000, "1.00 µs"}, {12_345, "12.3 µs"}, {850_000, "850 µs"},
		{12_300_000, "12.3 ms"}, {1_250_000_000, "1.25 s"}, {8_071_073_000, "8.07 s"}, {122_500_000_000, "122 s"},
		{failedLatencyNs, "failed"},
	} {
		if got := Readable(c.d); got != c.want {
			t.Errorf("Readable(%d) = %q, want %q", int64(c.d), got, c.want)
		}
	}
}

// LoadGen's min-duration advice stays word for word; netloadgen's note
// naming the flag follows it, and only when min duration is not met.
func TestMinDurationNote(t *testing.T) {
	s := referenceServerSummary(t)
	s.Settings.Scenario = trace.Offline
	s.MinDurationMet = false
	s.Network.MinDurationNote = "set it with --target-qps / settings.target_qps"
	lg := loadgenPart(t, writeSummaryString(t, s))
	want := "Recommendations:\n * Increase expected QPS so the loadgen pre-generates a larger (coalesced) query.\n" +
		" * netloadgen: set it with --target-qps / settings.target_qps\n"
	if !strings.Contains(lg, want) {
		t.Errorf("summary lacks %q:\n%s", want, lg)
	}
	s.MinDurationMet = true
	if lg := loadgenPart(t, writeSummaryString(t, s)); strings.Contains(lg, "--target-qps") {
		t.Errorf("the note shows with min duration met:\n%s", lg)
	}
}

package compliance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// fakeRunner answers with scripted figures and records the settings.
type fakeRunner struct {
	mean    map[string]int64 // mean sample latency by run name
	failed  map[string]int64
	logged  []loadgen.AccuracyEntry
	acc     []loadgen.AccuracyEntry
	settled map[string]loadgen.Settings
	// invalid names the runs that end INVALID: early stopping not met.
	invalid map[string]bool
}

func (f *fakeRunner) Performance(_ context.Context, name string, s loadgen.Settings) (*loadgen.Result, []loadgen.AccuracyEntry, error) {
	if f.settled == nil {
		f.settled = map[string]loadgen.Settings{}
	}
	f.settled[name] = s
	res := &loadgen.Result{Scenario: s.Scenario.String(), Validity: "VALID", SamplesIssued: 100, SamplesFailed: f.failed[name]}
	res.SampleLatency.MeanNs = f.mean[name]
	if f.invalid[name] {
		res.Validity, res.PerfConstraintsMet, res.MinDurationMet, res.MinQueriesMet, res.NoFailedSamples = "INVALID", true, true, true, true
		res.InvalidReasons = []string{"early stopping not met: Processed 150 queries; Would need at least 662 total queries"}
	}
	return res, f.logged, nil
}

func (f *fakeRunner) Accuracy(_ context.Context, name string, s loadgen.Settings) (*loadgen.AccuracyResult, error) {
	if f.settled == nil {
		f.settled = map[string]loadgen.Settings{}
	}
	f.settled[name] = s
	n := int64(len(f.acc))
	return &loadgen.AccuracyResult{SamplesIssued: n, SamplesCompleted: n, Entries: f.acc}, nil
}

func base() loadgen.Settings {
	s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	s.Scenario = trace.Server
	s.ServerTargetQPS = 100
	return s
}

func TestPairVerdicts(t *testing.T) {
	for _, tc := range []struct {
		test      Test
		ref, aud  int64 // mean latencies, ns
		failed    int64
		threshold float64
		pass      bool
	}{
		{TEST04, 2_000_000, 1_950_000, 0, 0, true},   // 2.6% faster
		{TEST04, 2_000_000, 1_700_000, 0, 0, false},  // 17.6% faster
		{TEST04, 2_000_000, 1_700_000, 0, 0.2, true}, // within a 20% threshold
		{TEST04, 2_000_000, 3_000_000, 0, 0, true},   // slower is fine
		{TEST04, 2_000_000, 2_000_000, 3, 0, false},  // failed samples
		{TEST05, 2_000_000, 2_080_000, 0, 0, true},   // 4% slower
		{TEST05, 2_000_000, 2_120_000, 0, 0, false},  // 6% slower
		{TEST05, 2_000_000, 1_880_000, 0, 0, false},  // 6% faster
		{TEST05, 100_000, 115_000, 0, 0, true},       // ≤ 0.2 ms: 20% allowed
		{Caching, 2_000_000, 250_000, 0, 0, false},
		{Caching, 2_000_000, 1_990_000, 0, 0, true},
	} {
		refName, audName := "reference", "audit"
		if tc.test == Caching {
			refName, audName = "unique", "duplicate"
		}
		r := &fakeRunner{mean: map[string]int64{refName: tc.ref, audName: tc.aud}, failed: map[string]int64{audName: tc.failed}}
		v, err := Run(context.Background(), tc.test, base(), Options{Threshold: tc.threshold, LoadedSamples: 64}, r)
		if err != nil {
			t.Fatal(err)
		}
		if v.Pass != tc.pass {
			t.Errorf("%s ref %d audit %d: pass %v, want %v: %s", tc.test, tc.ref, tc.aud, v.Pass, tc.pass, v.Text())
		}
		if !strings.HasPrefix(v.Summary, string(tc.test)+" ") {
			t.Errorf("summary %q does not name the test", v.Summary)
		}
	}
}

func TestAuditedRunSettings(t *testing.T) {
	r := &fakeRunner{mean: map[string]int64{"reference": 1, "audit": 1, "unique": 1, "duplicate": 1}}
	if _, err := Run(context.Background(), TEST04, base(), Options{}, r); err != nil {
		t.Fatal(err)
	}
	if a, ref := r.settled["audit"], r.settled["reference"]; !a.PerformanceIssueSame || a.PerformanceIssueSameIndex != 3 || ref.PerformanceIssueSame {
		t.Errorf("TEST04: audit same=%v index %d, reference same=%v", a.PerformanceIssueSame, a.PerformanceIssueSameIndex, ref.PerformanceIssueSame)
	}
	if _, err := Run(context.Background(), TEST05, base(), Options{}, r); err != nil {
		t.Fatal(err)
	}
	a := r.settled["audit"]
	if !a.Test05 || a.Test05ScheduleRNGSeed == base().ScheduleRNGSeed || a.Test05QSLRNGSeed == base().QSLRNGSeed {
		t.Errorf("TEST05: audit test05=%v seeds %d %d", a.Test05, a.Test05QSLRNGSeed, a.Test05ScheduleRNGSeed)
	}
	if _, err := Run(context.Background(), Caching, base(), Options{LoadedSamples: 64}, r); err != nil {
		t.Fatal(err)
	}
	u, d := r.settled["unique"], r.settled["duplicate"]
	if !u.PerformanceIssueUnique || d.PerformanceIssueUnique || d.PerformanceSampleCountOverride != 8 || d.MinQueryCount != 64 || d.MaxQueryCount != 64 {
		t.Errorf("caching: unique %v; duplicate unique=%v override %d min %d max %d", u.PerformanceIssueUnique, d.PerformanceIssueUnique, d.PerformanceSampleCountOverride, d.MinQueryCount, d.MaxQueryCount)
	}
}

func TestAuditConfig(t *testing.T) {
	parse := func(text string) *loadgen.Config {
		c, err := loadgen.ParseConfig("audit.config", strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	s, err := AuditSettings(TEST04, base(), parse("*.*.mode = 2\n*.Server.performance_issue_same_index = 5\n"))
	if err != nil || s.PerformanceIssueSameIndex != 5 || !s.PerformanceIssueSame {
		t.Fatalf("index %d same %v err %v", s.PerformanceIssueSameIndex, s.PerformanceIssueSame, err)
	}
	s, err = AuditSettings(TEST01, base(), parse("*.*.accuracy_log_rng_seed = 77\n*.*.accuracy_log_sampling_target = 64\n"))
	if err != nil || s.AccuracyLogRNGSeed != 77 || s.AccuracyLogSamplingTarget != 64 {
		t.Fatalf("seed %d target %d err %v", s.AccuracyLogRNGSeed, s.AccuracyLogSamplingTarget, err)
	}
	if _, err := AuditSettings(TEST04, base(), parse("*.*.mode = 1\n")); err == nil {
		t.Fatal("an audit.config asking for accuracy mode was accepted")
	}
	if _, err := loadgen.ParseConfig("audit.config", strings.NewReader("#bad comment\n")); err == nil {
		t.Fatal("LoadGen's comment rule not enforced")
	}
}

func TestTest01Check(t *testing.T) {
	acc := []loadgen.AccuracyEntry{{SeqID: 0, QSLIndex: 4, Data: []byte{1, 2}}, {SeqID: 1, QSLIndex: 7, Data: []byte{3}}}
	for _, tc := range []struct {
		name   string
		logged []loadgen.AccuracyEntry
		pass   bool
	}{
		{"equal", []loadgen.AccuracyEntry{{SeqID: 9, QSLIndex: 7, Data: []byte{3}}, {SeqID: 12, QSLIndex: 4, Data: []byte{1, 2}}}, true},
		{"one byte differs", []loadgen.AccuracyEntry{{SeqID: 9, QSLIndex: 7, Data: []byte{4}}}, false},
		{"sample not in the accuracy run", []loadgen.AccuracyEntry{{SeqID: 9, QSLIndex: 8, Data: []byte{3}}}, false},
		{"nothing logged", nil, false},
	} {
		r := &fakeRunner{mean: map[string]int64{"audit": 1}, logged: tc.logged, acc: acc}
		v, err := Run(context.Background(), TEST01, base(), Options{}, r)
		if err != nil {
			t.Fatal(err)
		}
		if v.Pass != tc.pass {
			t.Errorf("%s: pass %v, want %v: %s", tc.name, v.Pass, tc.pass, v.Text())
		}
		if r.settled["accuracy"].Mode != trace.AccuracyOnly || r.settled["audit"].AccuracyLogRNGSeed != Test01Seed {
			t.Errorf("%s: runs not set up as TEST01: %v %d", tc.name, r.settled["accuracy"].Mode, r.settled["audit"].AccuracyLogRNGSeed)
		}
	}
}

func TestParseTest(t *testing.T) {
	for in, want := range map[string]Test{"TEST01": TEST01, "test04": TEST04, "TEST05": TEST05, "caching": Caching} {
		if got, err := ParseTest(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	if _, err := ParseTest("TEST06"); err == nil {
		t.Error("TEST06 accepted")
	}
}

// An audit never passes on a run that is not VALID, however its figures
// compare: the verdict is FAIL and says which run is INVALID and why.
func TestInvalidRunsFailTheAudit(t *testing.T) {
	same := []loadgen.AccuracyEntry{{SeqID: 0, QSLIndex: 4, Data: []byte{1}}}
	for _, tc := range []struct {
		test    Test
		invalid string
	}{
		{TEST01, "audit"}, {TEST04, "reference"}, {TEST04, "audit"}, {TEST05, "audit"}, {Caching, "duplicate"},
	} {
		mean := map[string]int64{"reference": 1e6, "audit": 1e6, "unique": 1e6, "duplicate": 1e6}
		r := &fakeRunner{mean: mean, logged: same, acc: same, invalid: map[string]bool{tc.invalid: true}}
		v, err := Run(context.Background(), tc.test, base(), Options{LoadedSamples: 64}, r)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%s FAIL: the %s run is INVALID (early stopping not met); ", tc.test, tc.invalid)
		text := v.Text()
		if v.Pass || !strings.HasPrefix(v.Summary, want) || !slices.Equal(v.InvalidRuns, []string{tc.invalid}) ||
			!strings.Contains(text, "    invalid: early stopping not met: Processed 150 queries") {
			t.Errorf("%s with an INVALID %s run: pass %v, invalid runs %v, want the summary to begin %q:\n%s", tc.test, tc.invalid, v.Pass, v.InvalidRuns, want, text)
		}
		r.invalid = nil
		if v, _ := Run(context.Background(), tc.test, base(), Options{LoadedSamples: 64}, r); !v.Pass || v.InvalidRuns != nil {
			t.Errorf("%s with VALID runs: %s", tc.test, v.Text())
		}
	}
}

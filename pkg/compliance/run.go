package compliance

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Runner carries out the runs a test needs; name tells them apart
// ("reference", "audit", "accuracy", "unique", "duplicate"), e.g. for
// their log directories.
type Runner interface {
	// Performance runs s and returns its result and, when s logs sampled
	// responses, the log.
	Performance(ctx context.Context, name string, s loadgen.Settings) (*loadgen.Result, []loadgen.AccuracyEntry, error)
	// Accuracy runs s in accuracy mode and returns its result.
	Accuracy(ctx context.Context, name string, s loadgen.Settings) (*loadgen.AccuracyResult, error)
}

// Options adjust a test.
type Options struct {
	// Audit is an audit.config applied to the audited run.
	Audit *loadgen.Config
	// Threshold replaces the test's default (TEST04 0.10, TEST05 0.05,
	// caching 0.10), as a fraction.
	Threshold float64
	// LoadedSamples is the size of the loaded performance set (the QSL's
	// performance count, capped by the total): the caching check's unique
	// run issues each of them once.
	LoadedSamples int
	// DuplicateFactor is how many times smaller the caching check's
	// duplicate set is (default 8).
	DuplicateFactor int
}

// Verdict is a test's outcome with its figures.
type Verdict struct {
	Test Test `json:"test"`
	Pass bool `json:"pass"`
	// Summary is one line: the verdict and the figures behind it.
	Summary    string       `json:"summary"`
	Comparison *Comparison  `json:"comparison,omitempty"`
	Test01     *Test01Check `json:"test01,omitempty"`
	// Runs are the two runs' outcomes, by name.
	Runs map[string]RunSummary `json:"runs"`
	// InvalidRuns name the runs the test depends on that are not VALID:
	// the test fails with any.
	InvalidRuns []string `json:"invalid_runs,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// RunSummary is what the verdict keeps of one run.
type RunSummary struct {
	Validity string `json:"validity,omitempty"`
	// InvalidReasons are an INVALID run's reasons (result.json's).
	InvalidReasons []string `json:"invalid_reasons,omitempty"`
	Figure         *Figure  `json:"figure,omitempty"`
	Samples        int64    `json:"samples"`
	Failed         int64    `json:"failed_samples"`
	Logged         int      `json:"logged_responses,omitempty"`
}

func perfSummary(res *loadgen.Result, logged int) RunSummary {
	f := FigureOf(res)
	return RunSummary{Validity: res.Validity, InvalidReasons: res.InvalidReasons, Figure: &f, Samples: res.SamplesIssued,
		Failed: res.SamplesFailed, Logged: logged}
}

// invalidRuns is the clause that fails a test on its runs' validity: an
// audit never passes on a run that is not VALID. It names each such run
// with the criteria it missed ("the audit run is INVALID (early stopping
// not met)"), records them in v and returns "" when every run is VALID.
func invalidRuns(v *Verdict, names []string, results ...*loadgen.Result) string {
	var clauses []string
	for i, res := range results {
		if res.Validity == "VALID" {
			continue
		}
		v.InvalidRuns = append(v.InvalidRuns, names[i])
		what := res.Validity
		if what == "" {
			what = "without a verdict"
		}
		c := fmt.Sprintf("the %s run is %s", names[i], what)
		if nm := res.NotMet(); res.Validity == "INVALID" && len(nm) > 0 {
			c += " (" + loadgen.NotMetText(nm) + ")"
		}
		clauses = append(clauses, c)
	}
	return strings.Join(clauses, ", ")
}

// Run runs test against base settings through r and judges it. An error
// means a run could not be carried out; a SUT that fails samples makes the
// test fail, not error.
func Run(ctx context.Context, test Test, base loadgen.Settings, o Options, r Runner) (*Verdict, error) {
	v := &Verdict{Test: test, Runs: map[string]RunSummary{}}
	switch test {
	case TEST01:
		return v, runTest01(ctx, v, base, o, r)
	case TEST04, TEST05:
		audit, err := AuditSettings(test, base, o.Audit)
		if err != nil {
			return nil, err
		}
		ref := base
		ref.Mode = trace.PerformanceOnly
		th := o.Threshold
		if th == 0 {
			th = map[Test]float64{TEST04: Test04Threshold, TEST05: Test05Threshold}[test]
		}
		return v, runPair(ctx, v, r, "reference", ref, "audit", audit, th, test == TEST05 && o.Threshold == 0)
	case Caching:
		audit, err := AuditSettings(test, base, o.Audit)
		if err != nil {
			return nil, err
		}
		f := o.DuplicateFactor
		if f == 0 {
			f = DuplicateFactor
		}
		unique, dup, err := cachingSettings(audit, o.LoadedSamples, f)
		if err != nil {
			return nil, err
		}
		th := o.Threshold
		if th == 0 {
			th = CachingThreshold
		}
		return v, runPair(ctx, v, r, "unique", unique, "duplicate", dup, th, false)
	}
	return nil, fmt.Errorf("compliance: unknown test %q", test)
}

// runPair runs the reference and the audited run and compares them: TEST04
// and caching fail when the audited run is faster by more than th, TEST05
// (symmetric) when the figures differ by more than th.
func runPair(ctx context.Context, v *Verdict, r Runner, refName string, ref loadgen.Settings, auditName string, audit loadgen.Settings, th float64, test05Fast bool) error {
	refRes, _, err := r.Performance(ctx, refName, ref)
	if err != nil {
		return fmt.Errorf("%s run: %w", refName, err)
	}
	audRes, _, err := r.Performance(ctx, auditName, audit)
	if err != nil {
		return fmt.Errorf("%s run: %w", auditName, err)
	}
	v.Runs[refName], v.Runs[auditName] = perfSummary(refRes, 0), perfSummary(audRes, 0)
	rf, af := FigureOf(refRes), FigureOf(audRes)
	if test05Fast && !rf.HigherIsFaster && rf.Value <= 0.2e6 && af.Value <= 0.2e6 {
		th = Test05FastThreshold
		v.Notes = append(v.Notes, "latency at most 0.2 ms: TEST05 allows 20%")
	}
	c := compare(rf, af, th)
	v.Comparison = &c
	failed := refRes.SamplesFailed + audRes.SamplesFailed
	symmetric := v.Test == TEST05
	var ok bool
	var what string
	if symmetric {
		ok = c.Difference <= th
		what = fmt.Sprintf("differs by %.1f%% (limit %.1f%%)", 100*c.Difference, 100*th)
	} else {
		ok = c.Faster <= th
		what = fmt.Sprintf("%s run is %.1f%% faster than the %s run (limit %.1f%%)", auditName, 100*c.Faster, refName, 100*th)
	}
	if math.IsNaN(c.Faster) || math.IsNaN(c.Difference) {
		ok = false
		what = "a run has no figure (no sample answered)"
	}
	if failed > 0 {
		ok = false
		v.Notes = append(v.Notes, fmt.Sprintf("%d samples failed: the runs do not measure the SUT", failed))
	}
	if inv := invalidRuns(v, []string{refName, auditName}, refRes, audRes); inv != "" {
		ok = false
		what = inv + "; " + what
	}
	v.Pass = ok
	v.Summary = fmt.Sprintf("%s %s: %s; %s %v, %s %v", v.Test, verdictWord(ok), what, refName, rf, auditName, af)
	return nil
}

func runTest01(ctx context.Context, v *Verdict, base loadgen.Settings, o Options, r Runner) error {
	audit, err := AuditSettings(TEST01, base, o.Audit)
	if err != nil {
		return err
	}
	if audit.AccuracyLogSamplingTarget == 0 && audit.AccuracyLogProbability == 0 {
		return fmt.Errorf("compliance: TEST01: the audit.config sets neither accuracy_log_sampling_target nor accuracy_log_probability")
	}
	acc := base
	acc.Mode = trace.AccuracyOnly
	accRes, err := r.Accuracy(ctx, "accuracy", acc)
	if err != nil {
		return fmt.Errorf("accuracy run: %w", err)
	}
	v.Runs["accuracy"] = RunSummary{Samples: accRes.SamplesIssued, Failed: accRes.SamplesFailed, Logged: len(accRes.Entries)}
	perfRes, logged, err := r.Performance(ctx, "audit", audit)
	if err != nil {
		return fmt.Errorf("audit run: %w", err)
	}
	v.Runs["audit"] = perfSummary(perfRes, len(logged))
	c := CheckTest01(logged, accRes.Entries)
	v.Test01 = &c
	ok := c.Pass() && accRes.Complete()
	if !accRes.Complete() {
		v.Notes = append(v.Notes, fmt.Sprintf("the accuracy run is incomplete: %d of %d samples answered", accRes.SamplesCompleted, accRes.SamplesIssued))
	}
	v.Notes = append(v.Notes, c.Examples...)
	why := ""
	if inv := invalidRuns(v, []string{"audit"}, perfRes); inv != "" {
		ok = false
		why = inv + "; "
	}
	v.Pass = ok
	v.Summary = fmt.Sprintf("TEST01 %s: %s%d responses logged in performance mode, %d compared with the accuracy run, %d differ, %d missing from it",
		verdictWord(ok), why, c.Logged, c.Compared, c.Mismatched, c.Missing)
	return nil
}

func verdictWord(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// Text is the verdict for a terminal: the summary, then one line per run
// and the notes.
func (v *Verdict) Text() string {
	var b strings.Builder
	b.WriteString(v.Summary)
	b.WriteByte('\n')
	for _, name := range []string{"reference", "audit", "unique", "duplicate", "accuracy"} {
		s, ok := v.Runs[name]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "  %s run: %d samples, %d failed", name, s.Samples, s.Failed)
		if s.Validity != "" {
			fmt.Fprintf(&b, ", %s", s.Validity)
		}
		if s.Figure != nil {
			fmt.Fprintf(&b, ", %v", *s.Figure)
		}
		if s.Logged > 0 {
			fmt.Fprintf(&b, ", %d responses logged", s.Logged)
		}
		b.WriteByte('\n')
		for _, r := range s.InvalidReasons {
			fmt.Fprintf(&b, "    invalid: %s\n", strings.Join(strings.Fields(r), " "))
		}
	}
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}

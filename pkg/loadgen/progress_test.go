package loadgen

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// snapshotAt takes the run's Progress as query at is issued: with SUTs
// that answer inline, every query before it has been answered by then.
type snapshotAt struct {
	SUT
	at  int
	run **Run
	got *Progress
}

func (s snapshotAt) IssueQuery(ctx context.Context, q Query, done func(Completion)) {
	if q.ID == s.at {
		*s.got = (*s.run).Progress()
	}
	s.SUT.IssueQuery(ctx, q, done)
}

// withoutExamples is fs as Progress shows them.
func withoutExamples(fs []Failure) []Failure {
	out := slices.Clone(fs)
	for i := range out {
		out[i].Example = ""
	}
	return out
}

// Failures by kind are live: at query 100 the first 100 queries' failures
// are counted by the classifier's kinds, sorted as the result sorts them,
// and at the end Progress's kinds are the result's.
func TestProgressFailuresByKind(t *testing.T) {
	clk := newFakeClock()
	fail := func(id int) error {
		switch id % 10 {
		case 3, 4:
			return statusErr{"HTTP 503"}
		case 5:
			return errors.New("reset by peer")
		case 7:
			return statusErr{"HTTP 500"}
		}
		return nil
	}
	var r *Run
	var seen Progress
	sut := snapshotAt{SUT: &fakeSUT{clock: clk, latency: constLatency(time.Millisecond), fail: fail, inline: true}, at: 100, run: &r, got: &seen}
	s := testSettings(t, RulesetV05, trace.Server)
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), WithFailureClassifier(statusClassifier), quiet)
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Progress(); p.Failures != nil {
		t.Errorf("failures before the start: %+v", p.Failures)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Failure{{Outcome: "error", Status: "HTTP 503", Count: 20}, {Outcome: "other", Count: 10}, {Outcome: "error", Status: "HTTP 500", Count: 10}}
	if !slices.Equal(seen.Failures, want) || seen.FailedSamples != 40 {
		t.Errorf("at query 100: failures %+v (failed %d), want %+v (40)", seen.Failures, seen.FailedSamples, want)
	}
	end := r.Progress()
	if len(res.Failures) != 3 || !slices.Equal(end.Failures, withoutExamples(res.Failures)) {
		t.Errorf("at the end: progress %+v, result %+v", end.Failures, res.Failures)
	}
	if end.Tokens != nil {
		t.Errorf("tokens %+v in a run without tokens", end.Tokens)
	}
}

// A run where nothing fails shows no failures.
func TestProgressNoFailures(t *testing.T) {
	clk := newFakeClock()
	r, res := execute(t, testSettings(t, RulesetV05, trace.Server), &fakeSUT{clock: clk, latency: constLatency(time.Millisecond), inline: true})
	if p := r.Progress(); res.SamplesFailed != 0 || p.Failures != nil {
		t.Errorf("%d failed, progress failures %+v", res.SamplesFailed, p.Failures)
	}
}

// kinds past MaxFailureKinds are counted under OverflowOutcome live as in
// the result.
func TestProgressFailureKindsBounded(t *testing.T) {
	clk := newFakeClock()
	fail := func(id int) error { return statusErr{"HTTP " + string(rune('A'+id%60))} }
	r, res := execute(t, testSettings(t, RulesetV05, trace.Server), &fakeSUT{clock: clk, latency: constLatency(time.Millisecond), fail: fail, inline: true},
		WithFailureClassifier(statusClassifier))
	p := r.Progress()
	if len(p.Failures) != MaxFailureKinds || !slices.Equal(p.Failures, withoutExamples(res.Failures)) {
		t.Errorf("%d kinds live, %d in the result; live %+v", len(p.Failures), len(res.Failures), p.Failures)
	}
}

// tokenLaw: every tenth query is slow to its first token and slow between
// tokens, so the live p50 and p99 fall well inside one value each.
func tokenLaw(id int) genLaw {
	if id%10 == 9 {
		return genLaw{ttft: 30 * time.Millisecond, gap: 6 * time.Millisecond, tokens: 5, input: 10}
	}
	return genLaw{ttft: 8 * time.Millisecond, gap: 2 * time.Millisecond, tokens: 5, input: 10}
}

// A generative run's token figures are live: at query 100, 100 samples of
// 5 tokens were answered, TTFT and TPOT at p50/p99 are the law's (within
// the histogram's 0.1%), tokens per second are the tokens over the time so
// far; at the end they are the result's. A failed sample counts in no
// token figure.
func TestProgressTokens(t *testing.T) {
	clk := newFakeClock()
	var r *Run
	var before, seen Progress
	gen := &genSUT{law: tokenLaw, generative: true, fail: func(id int) error {
		if id == 150 {
			return errors.New("boom")
		}
		return nil
	}}
	sut := snapshotAt{SUT: snapshotAt{SUT: gen, at: 100, run: &r, got: &seen}, at: 0, run: &r, got: &before}
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.ServerTargetLatencyNs = uint64(time.Second)
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), quiet)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if before.Tokens != nil {
		t.Errorf("tokens before any answer: %+v", before.Tokens)
	}
	lt := seen.Tokens
	if lt == nil {
		t.Fatal("no live tokens at query 100")
	}
	if lt.Samples != 100 || lt.OutputTokens != 500 {
		t.Errorf("at query 100: %d samples, %d tokens; want 100, 500", lt.Samples, lt.OutputTokens)
	}
	near := func(name string, got, want time.Duration) {
		t.Helper()
		if d := got - want; d < -want/1000 || d > want/1000 {
			t.Errorf("%s %v, want %v", name, got, want)
		}
	}
	near("TTFT p50", lt.TTFTP50, 8*time.Millisecond)
	near("TTFT p99", lt.TTFTP99, 30*time.Millisecond)
	near("TPOT p50", lt.TPOTP50, 2*time.Millisecond)
	near("TPOT p99", lt.TPOTP99, 6*time.Millisecond)
	if want := 500 / seen.Elapsed.Seconds(); seen.Elapsed <= 0 || lt.OutputTokensPerSecond != want {
		t.Errorf("%.1f tokens/s after %v, want %.1f", lt.OutputTokensPerSecond, seen.Elapsed, want)
	}
	end := r.Progress().Tokens
	tk := res.Tokens
	if end == nil || tk == nil || res.SamplesFailed != 1 {
		t.Fatalf("end: live %+v, result %+v, %d failed", end, tk, res.SamplesFailed)
	}
	if end.Samples != tk.Samples || end.OutputTokens != tk.OutputTokens {
		t.Errorf("end: live %d samples %d tokens, result %d, %d", end.Samples, end.OutputTokens, tk.Samples, tk.OutputTokens)
	}
	near("end TTFT p99", end.TTFTP99, time.Duration(tk.TTFT.P99))
	near("end TPOT p50", end.TPOTP50, time.Duration(tk.TPOT.P50))
}

// BenchmarkProgress is what a poller pays per Progress call (the daemon's
// event stream and progress.json, the CLI's progress line), after a run of
// 2,000 samples: tensor (one histogram merged), and generative with
// failures (three histograms merged, the kinds copied).
func BenchmarkProgress(b *testing.B) {
	for _, gen := range []bool{false, true} {
		b.Run(map[bool]string{false: "tensor", true: "generative"}[gen], func(b *testing.B) {
			s := testSettings(&testing.T{}, RulesetLoadGen6, trace.Server)
			s.MinQueryCount = 2000
			s.ServerTargetLatencyNs = uint64(time.Second)
			clk := newFakeClock()
			var sut SUT = &fakeSUT{clock: clk, latency: constLatency(time.Millisecond), inline: true}
			if gen {
				sut = &genSUT{law: lawOf, generative: true, fail: func(id int) error {
					if id%50 == 0 {
						return statusErr{"HTTP 503"}
					}
					return nil
				}}
			}
			r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, WithClock(clk), WithFailureClassifier(statusClassifier), quiet)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.Execute(context.Background()); err != nil {
				b.Fatal(err)
			}
			if p := r.Progress(); gen != (p.Tokens != nil && p.Failures != nil) {
				b.Fatalf("tokens %+v failures %+v", p.Tokens, p.Failures)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = r.Progress()
			}
		})
	}
}

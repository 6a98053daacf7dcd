package loadgen

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// nullSUT answers every query inline, like LoadGen's null SUT, so the
// benchmark measures the engine alone.
type nullSUT struct{}

func (nullSUT) Name() string { return "null" }
func (nullSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	done(q.Done(nil))
}

// BenchmarkServerIssue issues b.N Server queries on the system clock and
// reports the issue lateness (actual − scheduled) the scheduler achieves and
// the allocations per query of issuing and recording (setup and the final
// result are outside the timer).
func BenchmarkServerIssue(b *testing.B) {
	for _, qps := range []float64{5_000, 50_000} {
		for _, spin := range []time.Duration{0, 200 * time.Microsecond, DefaultSpinThreshold} {
			b.Run(fmt.Sprintf("qps=%g/spin=%v", qps, spin), func(b *testing.B) {
				s := DefaultSettings(RulesetLoadGen6)
				s.Scenario = trace.Server
				s.ServerTargetQPS = qps
				s.MinDurationMs = 1
				s.MinQueryCount = uint64(b.N)
				s.Engine.SpinThresholdNs = int64(spin)
				r, err := NewRun(s, nullSUT{}, &fakeQSL{total: 1024, perf: 1024}, WithLogger(slog.New(slog.DiscardHandler)))
				if err != nil {
					b.Fatal(err)
				}
				r.n = b.N // the trace holds at least b.N queries; issue exactly b.N
				b.ReportAllocs()
				b.ResetTimer()
				res, err := r.Execute(context.Background())
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				if p99, ok := res.IssueLateness.At(0.99); ok {
					b.ReportMetric(float64(p99.Nanoseconds()), "lateness-p99-ns")
				}
				b.ReportMetric(float64(res.IssueLateness.MaxNs), "lateness-max-ns")
			})
		}
	}
}

// nullGenSUT answers at once with a generative sample of 256 tokens, its
// gaps in one reused slice.
type nullGenSUT struct{ gaps []time.Duration }

func (*nullGenSUT) Name() string     { return "null generative" }
func (*nullGenSUT) Generative() bool { return true }
func (s *nullGenSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	c := q.Done(nil)
	c.FirstToken, c.Tokens, c.InputTokens, c.Gaps = q.Issued, len(s.gaps)+1, 128, s.gaps
	done(c)
}

// BenchmarkServerIssueGenerative is BenchmarkServerIssue's default case
// with 256-token samples: recording tokens and 255 gaps per sample must not
// allocate.
func BenchmarkServerIssueGenerative(b *testing.B) {
	s := DefaultSettings(RulesetLoadGen6)
	s.Scenario = trace.Server
	s.ServerTargetQPS = 50_000
	s.MinDurationMs = 1
	s.MinQueryCount = uint64(b.N)
	sut := &nullGenSUT{gaps: make([]time.Duration, 255)}
	for i := range sut.gaps {
		sut.gaps[i] = time.Duration(i+1) * time.Microsecond
	}
	r, err := NewRun(s, sut, &fakeQSL{total: 1024, perf: 1024}, WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	r.n = b.N
	b.ReportAllocs()
	b.ResetTimer()
	res, err := r.Execute(context.Background())
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Tokens == nil || res.Tokens.OutputTokens != int64(b.N)*256 {
		b.Fatalf("tokens %+v", res.Tokens)
	}
}

// BenchmarkVirtualServerCPU issues and completes b.N Server queries on a
// virtual clock: nothing sleeps, so ns/op is the engine's CPU per query
// (issue, completion, recording, and the result's sort) without a network,
// for tensor samples and for 256-token generative ones.
func BenchmarkVirtualServerCPU(b *testing.B) {
	for _, c := range []struct {
		name string
		sut  SUT
	}{{"tensor", nullSUT{}}, {"generative-256", &nullGenSUT{gaps: make([]time.Duration, 255)}}} {
		b.Run(c.name, func(b *testing.B) {
			s := DefaultSettings(RulesetLoadGen6)
			s.Scenario = trace.Server
			s.ServerTargetQPS = 100_000
			s.MinDurationMs = 1
			s.MinQueryCount = uint64(b.N)
			r, err := NewRun(s, c.sut, &fakeQSL{total: 1024, perf: 1024}, WithClock(newFakeClock()), WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				b.Fatal(err)
			}
			r.n = b.N
			b.ReportAllocs()
			b.ResetTimer()
			if _, err := r.Execute(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkServerIssuers issues b.N Server queries split between 1 and 2
// issuers, each with a null SUT answering inline, on the system clock at a
// rate no issuer holds (every query is due before it is issued): ns/query
// is the wall time per query, cpu-ns/query the process's CPU time per
// query (user + system, getrusage), allocs/query the allocations. The
// issuers run on their own threads, so with 2 cores 2 issuers should show
// about half the wall time and about the same CPU per query.
func BenchmarkServerIssuers(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("issuers=%d", n), func(b *testing.B) {
			s := DefaultSettings(RulesetLoadGen6)
			s.Scenario = trace.Server
			s.ServerTargetQPS = 100_000_000 // always behind: no sleeping
			s.MinDurationMs = 1
			s.MinQueryCount = uint64(b.N)
			s.Engine.Issuers = n
			others := make([]SUT, n-1)
			for k := range others {
				others[k] = nullSUT{}
			}
			r, err := NewRun(s, nullSUT{}, &fakeQSL{total: 1024, perf: 1024}, WithIssuerSUTs(others...), WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				b.Fatal(err)
			}
			r.n = b.N // the trace holds at least b.N queries; issue exactly b.N
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			res, err := r.Execute(context.Background())
			b.StopTimer()
			cpu := cpuTime() - cpu0
			if err != nil {
				b.Fatal(err)
			}
			if res.SamplesIssued != int64(b.N) || res.SamplesFailed != 0 {
				b.Fatalf("issued %d, failed %d; want %d, 0", res.SamplesIssued, res.SamplesFailed, b.N)
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/query")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStartLateness runs one-query Server runs that start at a common
// start 10 ms ahead (WithStartAt, a worker's wait) and reports how late
// their first query, due at the start itself, was issued: with the start's
// last millisecond spun (the engine's) and slept to the end on the timer
// (spin=0, the baseline). Alternate them on a busy host.
func BenchmarkStartLateness(b *testing.B) {
	for _, spin := range []time.Duration{0, startSpin} {
		b.Run(fmt.Sprintf("spin=%v", spin), func(b *testing.B) {
			s := DefaultSettings(RulesetLoadGen6)
			s.Scenario = trace.Server
			s.ServerTargetQPS = 1_000
			s.MinDurationMs, s.MinQueryCount = 1, 1
			var sum, worst int64
			for b.Loop() {
				r, err := NewRun(s, nullSUT{}, &fakeQSL{total: 1024, perf: 1024}, WithLogger(slog.New(slog.DiscardHandler)),
					WithStartAt(time.Now().Add(10*time.Millisecond)))
				if err != nil {
					b.Fatal(err)
				}
				r.n, r.startSpin = 1, spin
				res, err := r.Execute(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				sum += res.IssueLateness.MaxNs
				worst = max(worst, res.IssueLateness.MaxNs)
			}
			b.ReportMetric(float64(sum)/float64(b.N), "first-lateness-ns")
			b.ReportMetric(float64(worst), "first-lateness-max-ns")
		})
	}
}

// genShape is a shape computed, not held: arrival i at i·gap, in stage
// 3i/n, model i%3.
type genShape struct {
	n   int
	gap time.Duration
}

func (s genShape) Arrivals() (trace.Arrivals, error) { return &genPass{s: s}, nil }
func (s genShape) End() time.Duration                { return time.Duration(s.n) * s.gap }
func (s genShape) Stages() []shape.Stage {
	d := time.Duration(s.n) * s.gap / 3
	r := float64(time.Second / s.gap)
	return []shape.Stage{{Duration: d, From: r, To: r}, {Duration: d, From: r, To: r}, {Duration: d, From: r, To: r}}
}
func (genShape) Models() []string { return []string{"a", "b", "c"} }

type genPass struct {
	s genShape
	i int
}

func (p *genPass) Next() (trace.Arrival, bool) {
	if p.i >= p.s.n {
		return trace.Arrival{}, false
	}
	i := p.i
	p.i++
	return trace.Arrival{At: time.Duration(i) * p.s.gap, Stage: 3 * i / p.s.n, Model: i % 3}, true
}
func (*genPass) Err() error   { return nil }
func (*genPass) Close() error { return nil }

// BenchmarkShapedResult measures what a shaped run's result adds after
// the run: the pass beside the record that splits it by stage and model
// (histograms, not copies: B/op must not grow with the samples) and the
// SLO's verdict (an exact percentile over the record).
func BenchmarkShapedResult(b *testing.B) {
	for _, c := range []struct {
		n   int
		gen bool
	}{{100_000, false}, {1_000_000, false}, {100_000, true}, {1_000_000, true}} {
		n := c.n
		b.Run(fmt.Sprintf("samples=%d/generative=%v", n, c.gen), func(b *testing.B) {
			s := DefaultSettings(RulesetLoadGen6)
			s.Scenario, s.Shape = trace.Server, genShape{n: n, gap: 10 * time.Microsecond}
			s.Engine.SLO = genai.SLO{Latency: time.Millisecond}
			var sut SUT = nullSUT{}
			if c.gen {
				// Two tokens; a TTFT and a TPOT bound beside the latency's.
				s.Engine.SLO.TTFT, s.Engine.SLO.TPOT = time.Millisecond, time.Millisecond
				sut = &nullGenSUT{gaps: []time.Duration{time.Microsecond}}
			}
			r, err := NewRun(s, sut, &fakeQSL{total: 1024, perf: 1024}, WithClock(newFakeClock()), WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				b.Fatal(err)
			}
			res, err := r.Execute(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				r.shapedResult(res)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sample")
			if res.Stages[0].SamplesIssued+res.Stages[1].SamplesIssued+res.Stages[2].SamplesIssued != int64(n) {
				b.Fatalf("stages hold %+v", res.Stages)
			}
		})
	}
}

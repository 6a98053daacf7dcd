package runlog_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// virtualClock makes runs deterministic and instant: the issuer's sleeps
// jump to the due time, and closed-loop SUTs move it to their completions.
type virtualClock struct {
	base time.Time
	now  atomic.Int64
	late time.Duration // added to a sleep that has to wait: a scheduler that wakes late
}

func newVirtualClock() *virtualClock { return &virtualClock{base: time.Unix(1_700_000_000, 0)} }

func (c *virtualClock) Now() time.Time { return c.base.Add(time.Duration(c.now.Load())) }

func (c *virtualClock) advanceTo(t time.Time) {
	v := int64(t.Sub(c.base))
	for {
		cur := c.now.Load()
		if v <= cur || c.now.CompareAndSwap(cur, v) {
			return
		}
	}
}

func (c *virtualClock) SleepUntil(ctx context.Context, t time.Time) {
	if ctx.Err() == nil && c.Now().Before(t) {
		c.advanceTo(t.Add(c.late))
	}
}

// memorySUT answers every query from a goroutine after a scripted latency
// on the virtual clock, failing the queries fail picks.
type memorySUT struct {
	clock   *virtualClock
	latency func(id int) time.Duration
	fail    func(id int) error
	advance bool // closed loops: the next query waits for this completion
	batch   int  // >0: answer in ranges of this many samples (Offline)
	// tokens, when set, makes the answers generative: query id's first
	// token comes ttft after its issue, and it has n output tokens.
	tokens func(id int) (ttft time.Duration, n int)
}

func (s *memorySUT) Name() string { return "in-memory (Network SUT)" }

func (s *memorySUT) IssueQuery(_ context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	go func() {
		at := q.Issued.Add(s.latency(q.ID))
		var err error
		if s.fail != nil {
			err = s.fail(q.ID)
		}
		if s.advance {
			s.clock.advanceTo(at)
		}
		step := len(q.Samples)
		if s.batch > 0 {
			step = s.batch
		}
		for first := 0; first < len(q.Samples); first += step {
			c := q.DoneRange(first, min(step, len(q.Samples)-first), err)
			c.At = at
			if s.tokens != nil && err == nil {
				ttft, n := s.tokens(q.ID)
				c.FirstToken, c.Tokens, c.TokensFromServer = q.Issued.Add(ttft), n, true
			}
			done(c)
		}
	}()
}

type memoryQSL struct{ total, perf int }

func (q memoryQSL) TotalSampleCount() int             { return q.total }
func (q memoryQSL) PerformanceSampleCount() int       { return q.perf }
func (q memoryQSL) Load(context.Context, []int) error { return nil }

// scenarioCase is one short run.
type scenarioCase struct {
	name     string
	ruleset  loadgen.Ruleset
	scenario trace.Scenario
	// latency of query id; fail picks failing queries (nil: none).
	latency func(id int) time.Duration
	fail    func(id int) error
	tweak   func(s *loadgen.Settings) // optional changes to the settings
	tokens  func(id int) (ttft time.Duration, n int)
}

func settingsFor(t *testing.T, c scenarioCase) loadgen.Settings {
	t.Helper()
	s := loadgen.DefaultSettings(c.ruleset)
	s.Scenario = c.scenario
	s.QSLRNGSeed, s.SampleIndexRNGSeed, s.ScheduleRNGSeed = 2085463073848966840, 2747215439041700203, 16159082839903944936
	// Short in virtual time, but enough queries for loadgen6's early
	// stopping to pass (Server at p99 needs about 460 under the bound).
	s.MinDurationMs = 100
	s.MinQueryCount = 700
	s.SingleStreamExpectedLatencyNs = 100_000
	s.MultiStreamExpectedLatencyNs = 100_000
	s.MultiStreamSamplesPerQuery = 4
	s.MultiStreamTargetQPS = 1000 // v0.5: 1 ms ticks
	s.ServerTargetQPS = 10_000
	s.ServerTargetLatencyNs = 10_000_000
	s.OfflineExpectedQPS = 5_000
	s.Engine.DrainTimeoutMs = 5_000
	if c.tweak != nil {
		c.tweak(&s)
	}
	return s
}

func constLatency(d time.Duration) func(int) time.Duration {
	return func(int) time.Duration { return d }
}

// execute runs c to completion and returns the run and its result.
func execute(t *testing.T, c scenarioCase) (*loadgen.Run, *loadgen.Result) {
	t.Helper()
	clk := newVirtualClock()
	closedLoop := c.scenario != trace.Server
	sut := &memorySUT{clock: clk, latency: c.latency, fail: c.fail, advance: closedLoop, tokens: c.tokens}
	if c.scenario == trace.Offline {
		sut.batch = 64
	}
	run, err := loadgen.NewRun(settingsFor(t, c), sut, memoryQSL{total: 1024, perf: 256},
		loadgen.WithClock(clk), loadgen.WithLogger(quietLogger()))
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	res, err := run.Execute(context.Background())
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return run, res
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

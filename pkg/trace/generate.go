package trace

import (
	"errors"
	"fmt"
	"time"

	"github.com/netloadgen/netloadgen/pkg/rng"
)

// MaxSamples bounds the samples of one trace: past it, Generate fails with
// ErrTooLarge instead of a run exhausting memory (the trace holds none but
// Offline's, but a run keeps a record of every sample, 8 bytes or more).
const MaxSamples = 1 << 28

// ErrTooLarge is returned when the settings would generate more than
// MaxSamples samples, or never stop generating.
var ErrTooLarge = errors.New("trace too large")

// New computes the effective settings and generates the trace, as LoadGen
// does between StartTest and the first issued query.
func New(req Requested, qsl QSL) (*Trace, error) {
	e, err := EffectiveSettings(req, qsl)
	if err != nil {
		return nil, err
	}
	if req.Shape != nil {
		return generateShaped(e, qsl.TotalSampleCount, req.Shape)
	}
	return Generate(e, qsl.TotalSampleCount)
}

// Generate builds the performance-mode trace from effective settings, in
// LoadGen 6.0.17's RNG-consumption order (GenerateQueries, loadgen.cc):
// the loaded set from qsl_rng; from sample_rng the always-run "unique"
// shuffle, the always-run equal-issue shuffles, then per query the sample
// draws; from schedule_rng the Server inter-arrival times.
//
// It holds no query: one counting pass runs GenerateQueries' loop to fix
// generated_query_count, generated_query_duration and the last query's
// offset, and fails where LoadGen would. The pass draws only from
// schedule_rng (and for Offline, whose one query it keeps, sample_rng's
// shuffles): the count depends on the schedule alone, and sample draws come
// from their own engine, so a Cursor, starting from the state the pass
// started from, draws both streams exactly as LoadGen does. For Server the
// pass costs an exponential draw a query (BenchmarkCountServer60M).
func Generate(e Effective, qslTotal uint64) (*Trace, error) {
	if qslTotal == 0 || e.PerformanceSampleCount == 0 || e.SamplesPerQuery == 0 || !(e.TargetQPS > 0) {
		return nil, fmt.Errorf("%w: effective settings not from EffectiveSettings", ErrInvalidSettings)
	}
	if e.SamplesPerQuery > MaxSamples {
		return nil, fmt.Errorf("%w: %d samples per query (limit %d samples)", ErrTooLarge, e.SamplesPerQuery, MaxSamples)
	}
	if e.PerformanceIssueSame && e.PerformanceIssueSameIndex >= min(e.PerformanceSampleCount, qslTotal) {
		return nil, fmt.Errorf("%w: performance_issue_same_index %d is past the loaded set", ErrInvalidSettings, e.PerformanceIssueSameIndex)
	}
	loaded, end := LoadedSet(e, qslTotal)
	g := newGenerator(e, loaded, end)
	if err := g.prepare(); err != nil {
		return nil, err
	}
	t := &Trace{
		Settings:        e,
		LoadedSet:       loaded,
		DistributionEnd: end,
		sampleRNG:       *g.sampleRNG,
		scheduleRNG:     *g.scheduleRNG,
		period:          g.period,
		equalIssue:      g.equalIssue, // built only with equal issue
	}
	if e.PerformanceIssueUnique {
		t.unique = g.unique // always shuffled, kept only when read
	}
	if err := g.count(); err != nil {
		return nil, err
	}
	if g.n == 0 {
		// LoadGen would index queries[-1] after issuing nothing.
		return nil, fmt.Errorf("%w: the settings generate no queries (min_query_count and min_duration 0, or issue-unique with fewer loaded samples than samples per query)", ErrInvalidSettings)
	}
	t.SamplesPerQuery = g.spq
	t.Duration = g.timestamp
	t.n, t.last = g.n, g.last
	t.offline = g.offline
	return t, nil
}

// Size is the size of a trace: about Queries queries of SamplesPerQuery
// samples. The trace holds none of them (Offline's one query aside); a
// run's records of it hold an entry per sample, and some per query.
type Size struct {
	// Queries is exact but for the last period (1 or 2 queries), and for
	// Server the expectation of the Poisson schedule.
	Queries         float64
	SamplesPerQuery uint64
}

// Samples is the size in samples, Queries × SamplesPerQuery.
func (s Size) Samples() float64 { return s.Queries * float64(s.SamplesPerQuery) }

// SizeOf is the size of the trace Generate would build from e for a QSL of
// qslTotal samples, found without generating it (or anything of its
// size): what a caller bounds before it asks for the trace. It fails with
// ErrTooLarge where Generate would never stop. Past MaxSamples samples per
// query, Queries is only min_query_count: the size is too large anyway.
func SizeOf(e Effective, qslTotal uint64) (Size, error) {
	if e.SamplesPerQuery > MaxSamples {
		return Size{Queries: float64(max(e.MinQueryCount, 1)), SamplesPerQuery: e.SamplesPerQuery}, nil
	}
	n := int(min(e.PerformanceSampleCount, qslTotal, MaxSamples))
	if e.Scenario == MultiStream {
		n += int(e.SamplesPerQuery) - 1 // LoadedSet's padding
	}
	s := newSizing(e, n)
	s.padForEqualIssue(e, n)
	q, err := s.queries(e)
	return Size{Queries: q, SamplesPerQuery: uint64(s.spq)}, err
}

// sizing is what decides how many queries of how many samples Generate
// builds.
type sizing struct {
	spq        int
	minQueries uint64
	genNs      time.Duration // generation continues while the last offset is below it
	period     time.Duration // non-Server constant inter-arrival
}

func newSizing(e Effective, loaded int) sizing {
	mult := time.Duration(2) // twice min_duration in case the SUT is faster than expected
	if e.Scenario == Server {
		mult = 1 // only the ideal schedule counts for Server
	}
	s := sizing{
		spq:        int(e.SamplesPerQuery),
		minQueries: e.MinQueryCount,
		genNs:      mult * time.Duration(e.TargetDurationMs) * time.Millisecond,
	}
	if e.PerformanceIssueUnique && s.spq > 0 {
		// Every loaded sample once: no duration, just enough queries.
		s.genNs = 0
		s.minQueries = uint64(loaded / s.spq)
	}
	if e.Scenario != Server && e.TargetQPS > 0 {
		s.period = rng.DurationCastNs(1.0 / e.TargetQPS)
	}
	return s
}

// padForEqualIssue makes Offline's query, or the other scenarios' minimum
// count, a whole number of passes over the loaded set of l samples.
func (s *sizing) padForEqualIssue(e Effective, l int) {
	if !e.SampleConcatenatePermutation || l == 0 {
		return
	}
	if e.Scenario == Offline {
		if r := s.spq % l; r != 0 {
			s.spq += l - r
		}
	} else if r := s.minQueries % uint64(l); r != 0 {
		s.minQueries += uint64(l) - r
	}
}

// queries is how many queries the generation makes: enough to cover genNs
// at the rate, and at least minQueries.
func (s sizing) queries(e Effective) (float64, error) {
	var queries float64
	switch {
	case s.genNs == 0:
	case e.Scenario == Server:
		queries = s.genNs.Seconds() * e.TargetQPS
	case s.period <= 0:
		return 0, fmt.Errorf("%w: the query period 1/target_qps truncates to 0 ns, so LoadGen would never stop generating", ErrTooLarge)
	default:
		queries = float64(s.genNs / s.period)
	}
	return max(queries, float64(s.minQueries)), nil
}

// generator holds GenerateQueries' local state for the counting pass.
type generator struct {
	sizing
	e      Effective
	loaded []int
	end    int // sample_distribution_end

	sampleRNG   *rng.MT19937
	scheduleRNG *rng.MT19937
	unique      []int // shuffled positions for performance_issue_unique
	uniqueNext  int
	equalIssue  []int // concatenated shuffles for sample_concatenate_permutation

	n         int           // queries generated so far
	last      time.Duration // the last query's offset
	timestamp time.Duration // the next query's offset
	offline   []int         // Offline's samples
}

func newGenerator(e Effective, loaded []int, end int) *generator {
	return &generator{
		sizing:      newSizing(e, len(loaded)),
		e:           e,
		loaded:      loaded,
		end:         end,
		sampleRNG:   rng.NewMT19937(e.SampleIndexRNGSeed),
		scheduleRNG: rng.NewMT19937(e.ScheduleRNGSeed),
	}
}

// prepare consumes sample_rng for the two lists LoadGen always builds, pads
// for equal issue, and checks that the generation will end within MaxSamples.
func (g *generator) prepare() error {
	e, l := g.e, len(g.loaded)
	// Before any loop over min_queries: a huge count must fail, not spin.
	if err := g.checkSize(); err != nil {
		return err
	}
	stride := 1
	if e.Scenario == MultiStream {
		stride = g.spq
	}
	for i := 0; i < g.end; i += stride {
		g.unique = append(g.unique, i)
	}
	rng.Shuffle(g.sampleRNG, g.unique)

	// The equal-issue list is shuffled cumulatively, once per started pass
	// of min_queries over the loaded set, whether or not it is used.
	if l > 1 {
		sh := make([]int, l)
		for i := range sh {
			sh[i] = i
		}
		for j := uint64(0); j < g.minQueries; j += uint64(l) {
			rng.Shuffle(g.sampleRNG, sh)
			if e.SampleConcatenatePermutation {
				g.equalIssue = append(g.equalIssue, sh...)
			}
		}
	} else if g.minQueries > 0 {
		g.equalIssue = []int{0} // a one-sample set: every entry is 0, no draws
	}

	if e.SampleConcatenatePermutation {
		g.padForEqualIssue(e, l)
		if len(g.equalIssue) == 0 && (e.Scenario == SingleStream || e.Scenario == Server) &&
			!e.PerformanceIssueUnique && !e.PerformanceIssueSame {
			return fmt.Errorf("%w: sample_concatenate_permutation with min_query_count 0 (LoadGen divides by zero)", ErrInvalidSettings)
		}
	}
	return nil
}

func (g *generator) checkSize() error {
	queries, err := g.queries(g.e)
	if err != nil {
		return err
	}
	if queries*float64(g.spq) > MaxSamples {
		return fmt.Errorf("%w: about %.0f queries of %d samples (limit %d samples)", ErrTooLarge, queries, g.spq, MaxSamples)
	}
	if g.e.Scenario == Offline {
		// Offline's one query is kept: reserve it, exactly (a margin of
		// 64 queries once reserved 65 times a million-sample query).
		g.offline = make([]int, 0, min(max(int(queries), 1)*g.spq, MaxSamples))
	}
	return nil
}

// count is GenerateQueries' loop without its queries: it counts them,
// follows the schedule, consumes the issue-unique list and builds
// Offline's samples, failing where the loop would.
func (g *generator) count() error {
	e := g.e
	var prev time.Duration
	for prev < g.genNs || uint64(g.n) < g.minQueries {
		if err := g.addSamples(); err != nil {
			return err
		}
		if uint64(g.n+1)*uint64(g.spq) > MaxSamples {
			return fmt.Errorf("%w: more than %d samples", ErrTooLarge, MaxSamples)
		}
		g.n++
		g.last = g.timestamp
		prev = g.timestamp
		g.timestamp += g.nextDelta()
		// Equal issue keeps adding whole passes over the loaded set while
		// the duration is not yet reached.
		if e.SampleConcatenatePermutation && uint64(g.n) >= g.minQueries &&
			prev < g.genNs && e.Scenario != Offline {
			g.minQueries += uint64(len(g.loaded))
		}
	}
	return nil
}

func (g *generator) nextDelta() time.Duration {
	if g.e.Scenario == Server {
		return rng.DurationCastNs(rng.Exponential(g.scheduleRNG, g.e.TargetQPS))
	}
	return g.period
}

var errUniqueExhausted = fmt.Errorf("%w: performance_issue_unique ran out of loaded samples (LoadGen throws std::out_of_range)", ErrInvalidSettings)

// addSamples is a query's sample selection as far as the counting pass
// needs it: the issue-unique list's consumption, and Offline's samples,
// which the trace keeps. The other draws are the cursor's.
func (g *generator) addSamples() error {
	e := g.e
	if e.Scenario == Offline {
		g.addOffline()
		return nil
	}
	if !e.PerformanceIssueUnique {
		return nil
	}
	// MultiStream draws one position for its spq contiguous samples.
	per := g.spq
	if e.Scenario == MultiStream {
		per = 1
	}
	if g.uniqueNext+per > len(g.unique) {
		return errUniqueExhausted
	}
	g.uniqueNext += per
	return nil
}

// addOffline appends Offline's query: the loaded set repeated back to back,
// no randomness unless equal issue shuffles each full repetition.
func (g *generator) addOffline() {
	e := g.e
	if e.PerformanceIssueSame {
		s := g.loaded[e.PerformanceIssueSameIndex]
		for range g.spq {
			g.offline = append(g.offline, s)
		}
		return
	}
	l := len(g.loaded)
	for range g.spq / l {
		start := len(g.offline)
		g.offline = append(g.offline, g.loaded...)
		if e.SampleConcatenatePermutation {
			rng.Shuffle(g.sampleRNG, g.offline[start:])
		}
	}
	g.offline = append(g.offline, g.loaded[:g.spq%l]...)
}

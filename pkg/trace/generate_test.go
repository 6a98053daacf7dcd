package trace

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func mustNew(t testing.TB, req Requested, qsl QSL) *Trace {
	t.Helper()
	tr, err := New(req, qsl)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func isPermutation(s []int, n int) bool {
	if len(s) != n {
		return false
	}
	c := slices.Clone(s)
	slices.Sort(c)
	for i, v := range c {
		if v != i {
			return false
		}
	}
	return true
}

func TestLoadedSetShufflesOnlyThePerformanceCount(t *testing.T) {
	tests := []struct {
		name        string
		total, perf uint64
		wantLen     int
	}{
		{"QSL larger than the set", 5000, 64, 64},
		{"QSL smaller than the set", 10, 64, 10},
		{"equal", 33, 33, 33},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := EffectiveSettings(DefaultSettings(), QSL{tc.total, tc.perf})
			if err != nil {
				t.Fatal(err)
			}
			set, end := LoadedSet(e, tc.total)
			if end != tc.wantLen || !isPermutation(set, tc.wantLen) {
				t.Fatalf("set %v (end %d): want a permutation of [0,%d)", set, end, tc.wantLen)
			}
		})
	}
}

func TestMultiStreamPaddingWrapsAShortSet(t *testing.T) {
	req := DefaultSettings()
	req.Scenario = MultiStream
	req.MultiStreamSamplesPerQuery = 8
	e, err := EffectiveSettings(req, QSL{3, 3})
	if err != nil {
		t.Fatal(err)
	}
	set, end := LoadedSet(e, 3)
	if end != 3 || len(set) != 10 {
		t.Fatalf("len %d end %d, want 10 and 3", len(set), end)
	}
	for i := 3; i < len(set); i++ {
		if set[i] != set[i%3] {
			t.Fatalf("padding %v does not repeat the set", set)
		}
	}
}

func TestMultiStreamQueriesAreContiguous(t *testing.T) {
	req := DefaultSettings()
	req.Scenario = MultiStream
	req.MultiStreamSamplesPerQuery = 5
	req.SampleIndexRNGSeed = 99
	tr := mustNew(t, req, QSL{200, 100})
	qs := collect(tr)
	pos := map[int]int{}
	for i, s := range tr.LoadedSet[:tr.DistributionEnd] {
		pos[s] = i
	}
	for i := range tr.Len() {
		q := qs[i]
		start := pos[q.Samples[0]]
		if !slices.Equal(q.Samples, tr.LoadedSet[start:start+5]) {
			t.Fatalf("query %d samples %v are not contiguous in the loaded set", i, q.Samples)
		}
		if want := time.Duration(i) * 8 * time.Millisecond; q.Scheduled != want {
			t.Fatalf("query %d scheduled %v, want %v", i, q.Scheduled, want)
		}
	}
	// 2 x 10 s at 125 qps: offsets 0 .. 20 s inclusive.
	if tr.Len() != 2501 || tr.Duration != 20008*time.Millisecond {
		t.Errorf("%d queries, duration %v", tr.Len(), tr.Duration)
	}
}

func TestServerScheduleCoversMinDuration(t *testing.T) {
	req := DefaultSettings()
	req.Scenario = Server
	req.ServerTargetQPS = 200
	req.MinDurationMs = 3000
	req.ScheduleRNGSeed = 7
	tr := mustNew(t, req, QSL{1024, 1024})
	qs := collect(tr)
	minDur := 3 * time.Second
	last := qs[tr.Len()-1].Scheduled
	if last < minDur || qs[tr.Len()-2].Scheduled >= minDur {
		t.Fatalf("last two offsets %v, %v around min duration %v", qs[tr.Len()-2].Scheduled, last, minDur)
	}
	for i := 1; i < tr.Len(); i++ {
		if qs[i].Scheduled < qs[i-1].Scheduled {
			t.Fatalf("offsets decrease at query %d", i)
		}
	}
	if tr.Duration < last {
		t.Errorf("duration %v before the last query %v", tr.Duration, last)
	}
	if n := tr.Len(); n < 500 || n > 700 {
		t.Errorf("%d queries for 3 s at 200 qps", n)
	}
}

func TestSeedsUseOnlyTheirLow32Bits(t *testing.T) {
	a, b := DefaultSettings(), DefaultSettings()
	a.Scenario, b.Scenario = Server, Server
	a.QSLRNGSeed, b.QSLRNGSeed = 5, 5|1<<40
	a.SampleIndexRNGSeed, b.SampleIndexRNGSeed = 6, 6|1<<33
	a.ScheduleRNGSeed, b.ScheduleRNGSeed = 7, 7|1<<63
	ta, tb := mustNew(t, a, QSL{512, 256}), mustNew(t, b, QSL{512, 256})
	if !slices.Equal(scheduledOf(ta), scheduledOf(tb)) || !slices.Equal(samplesOf(ta), samplesOf(tb)) || !slices.Equal(ta.LoadedSet, tb.LoadedSet) {
		t.Fatal("traces differ for seeds equal mod 2^32")
	}
	b.ScheduleRNGSeed = 8
	if tc := mustNew(t, b, QSL{512, 256}); slices.Equal(scheduledOf(ta), scheduledOf(tc)) {
		t.Fatal("another schedule seed gave the same schedule")
	}
}

func TestEqualIssueSingleStreamCoversEachSamplePerPass(t *testing.T) {
	req := DefaultSettings()
	req.SampleConcatenatePermutation = true
	req.SingleStreamExpectedLatencyNs = 50_000_000 // 20 qps: 2*1 s*20 = 40 queries
	req.MinDurationMs = 1000
	req.SampleIndexRNGSeed = 3
	tr := mustNew(t, req, QSL{1000, 64})
	qs := collect(tr)
	l := len(tr.LoadedSet)
	if tr.Len()%l != 0 || tr.Len() == 0 {
		t.Fatalf("%d queries: not a whole number of passes over %d", tr.Len(), l)
	}
	pos := map[int]int{}
	for i, s := range tr.LoadedSet {
		pos[s] = i
	}
	for p := 0; p < tr.Len(); p += l {
		var idx []int
		for i := p; i < p+l; i++ {
			idx = append(idx, pos[qs[i].Samples[0]])
		}
		if !isPermutation(idx, l) {
			t.Fatalf("pass starting at query %d is not a permutation of the loaded set", p)
		}
	}
}

func TestEqualIssueOfflinePadsAndShufflesEachRepetition(t *testing.T) {
	req := DefaultSettings()
	req.Scenario = Offline
	req.SampleConcatenatePermutation = true
	req.MinQueryCount = 250
	req.OfflineExpectedQPS = 1
	tr := mustNew(t, req, QSL{100, 100})
	qs := collect(tr)
	if tr.Len() != 1 || tr.SamplesPerQuery != 300 {
		t.Fatalf("%d queries of %d samples, want 1 of 300", tr.Len(), tr.SamplesPerQuery)
	}
	q := qs[0].Samples
	for r := 0; r < 3; r++ {
		if !isPermutation(q[r*100:(r+1)*100], 100) {
			t.Fatalf("repetition %d is not a permutation", r)
		}
	}
	if slices.Equal(q[:100], tr.LoadedSet) {
		t.Error("first repetition not shuffled")
	}
}

func TestIssueSameRepeatsOneSampleAndKeepsTheSchedule(t *testing.T) {
	for _, sc := range []Scenario{SingleStream, MultiStream, Server, Offline} {
		t.Run(sc.String(), func(t *testing.T) {
			req := DefaultSettings()
			req.Scenario = sc
			req.MinDurationMs = 500
			base := mustNew(t, req, QSL{64, 64})
			req.PerformanceIssueSame = true
			req.PerformanceIssueSameIndex = 3
			tr := mustNew(t, req, QSL{64, 64})
			qs := collect(tr)
			if !slices.Equal(scheduledOf(base), scheduledOf(tr)) {
				t.Fatal("performance_issue_same changed the schedule")
			}
			for i := range tr.Len() {
				q := qs[i].Samples
				if sc == MultiStream {
					if !slices.Equal(q, tr.LoadedSet[3:3+len(q)]) {
						t.Fatalf("query %d = %v", i, q)
					}
					continue
				}
				for _, s := range q {
					if s != tr.LoadedSet[3] {
						t.Fatalf("query %d holds %d, want %d", i, s, tr.LoadedSet[3])
					}
				}
			}
		})
	}
}

func TestIssueUniqueIssuesEachLoadedSampleOnce(t *testing.T) {
	req := DefaultSettings()
	req.Scenario = Server
	req.ServerTargetQPS = 50
	req.PerformanceIssueUnique = true
	tr := mustNew(t, req, QSL{500, 200})
	qs := collect(tr)
	if tr.Len() != 200 {
		t.Fatalf("%d queries, want 200", tr.Len())
	}
	var all []int
	for i := range tr.Len() {
		all = append(all, qs[i].Samples...)
	}
	got := slices.Clone(all)
	slices.Sort(got)
	wantSet := slices.Clone(tr.LoadedSet)
	slices.Sort(wantSet)
	if !slices.Equal(got, wantSet) {
		t.Fatal("samples are not the loaded set, each once")
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Requested)
		want   error
	}{
		{"too many samples", func(s *Requested) {
			s.Scenario = Server
			s.ServerTargetQPS = 1e9
			s.MinDurationMs = 600000
		}, ErrTooLarge},
		{"period truncates to zero", func(s *Requested) {
			s.SingleStreamExpectedLatencyNs = 0.5
		}, ErrTooLarge},
		{"unique runs out with equal-issue padding", func(s *Requested) {
			s.Scenario = MultiStream
			s.PerformanceIssueUnique = true
			s.SampleConcatenatePermutation = true
		}, ErrInvalidSettings},
		{"no queries at all", func(s *Requested) {
			s.MinQueryCount = 0
			s.MinDurationMs = 0
		}, ErrInvalidSettings},
		{"offline unique with a set smaller than the query", func(s *Requested) {
			s.Scenario = Offline
			s.PerformanceIssueUnique = true
			s.PerformanceSampleCountOverride = 100
		}, ErrInvalidSettings},
		{"equal issue with no queries to shuffle for", func(s *Requested) {
			s.Scenario = Server
			s.SampleConcatenatePermutation = true
			s.MinQueryCount = 0
		}, ErrInvalidSettings},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := DefaultSettings()
			tc.modify(&req)
			if _, err := New(req, QSL{64, 64}); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestHugeSettingsFailFast(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Requested)
	}{
		{"offline qps past uint64", func(s *Requested) { s.Scenario = Offline; s.OfflineExpectedQPS = 1e300 }},
		{"huge min_query_count with equal issue", func(s *Requested) {
			s.Scenario = Server
			s.SampleConcatenatePermutation = true
			s.MinQueryCount = 1 << 62
		}},
		{"huge multistream spq", func(s *Requested) { s.Scenario = MultiStream; s.MultiStreamSamplesPerQuery = 1 << 40 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := DefaultSettings()
			tc.modify(&req)
			if _, err := New(req, QSL{64, 64}); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge", err)
			}
		})
	}
}

// TestSizeOfMatchesGenerate: SizeOf tells, without generating, the size
// Generate builds: exact but for the last period (2 queries) and, for
// Server, the Poisson schedule's spread around its expectation.
func TestSizeOfMatchesGenerate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Requested)
	}{
		{"single stream by duration", func(s *Requested) { s.MinDurationMs = 500; s.MinQueryCount = 10 }},
		{"single stream by count", func(s *Requested) { s.MinDurationMs = 10; s.MinQueryCount = 5000 }},
		{"single stream equal issue", func(s *Requested) {
			s.MinDurationMs = 10
			s.MinQueryCount = 1000
			s.SampleConcatenatePermutation = true
		}},
		{"multi stream", func(s *Requested) { s.Scenario = MultiStream; s.MinDurationMs = 1000; s.MinQueryCount = 10 }},
		{"multi stream unique", func(s *Requested) { s.Scenario = MultiStream; s.PerformanceIssueUnique = true }},
		{"server by duration", func(s *Requested) { s.Scenario = Server; s.ServerTargetQPS = 20000; s.MinDurationMs = 1000 }},
		{"server by count", func(s *Requested) { s.Scenario = Server; s.ServerTargetQPS = 10; s.MinQueryCount = 3000 }},
		{"offline by duration", func(s *Requested) { s.Scenario = Offline; s.OfflineExpectedQPS = 5000; s.MinDurationMs = 2000 }},
		{"offline by count", func(s *Requested) { s.Scenario = Offline; s.MinQueryCount = 7777 }},
		{"offline equal issue", func(s *Requested) {
			s.Scenario = Offline
			s.MinQueryCount = 1000
			s.SampleConcatenatePermutation = true
		}},
		{"offline unique", func(s *Requested) { s.Scenario = Offline; s.PerformanceIssueUnique = true }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := DefaultSettings()
			tc.modify(&req)
			qsl := QSL{TotalSampleCount: 300, PerformanceSampleCount: 256}
			e, err := EffectiveSettings(req, qsl)
			if err != nil {
				t.Fatal(err)
			}
			size, err := SizeOf(e, qsl.TotalSampleCount)
			if err != nil {
				t.Fatal(err)
			}
			tr := mustNew(t, req, qsl)
			if size.SamplesPerQuery != uint64(tr.SamplesPerQuery) {
				t.Errorf("samples per query %d, Generate %d", size.SamplesPerQuery, tr.SamplesPerQuery)
			}
			slack := 2.0
			if req.Scenario == Server {
				slack += 0.05 * size.Queries
			}
			if d := size.Queries - float64(tr.Len()); d > slack || d < -slack {
				t.Errorf("%.0f queries, Generate %d", size.Queries, tr.Len())
			}
			if got := size.Samples(); got != size.Queries*float64(size.SamplesPerQuery) {
				t.Errorf("Samples() = %v", got)
			}
		})
	}
	req := DefaultSettings()
	req.Scenario, req.MinQueryCount = Offline, 1<<40
	e, err := EffectiveSettings(req, QSL{64, 64})
	if err != nil {
		t.Fatal(err)
	}
	if size, err := SizeOf(e, 64); err != nil || size.Queries != 1 || size.SamplesPerQuery != 1<<40 {
		t.Errorf("Offline's query of 2^40 samples: %+v, %v", size, err)
	}
	req = DefaultSettings()
	req.SingleStreamExpectedLatencyNs = 0.5
	e, err = EffectiveSettings(req, QSL{64, 64})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SizeOf(e, 64); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a period of 0 ns: err = %v, want ErrTooLarge", err)
	}
}

// TestOfflineReservesOneQuery: Offline's one query of many samples, the only
// query a trace keeps, reserves that query, not a margin of queries (a
// million-sample query once reserved 65 million).
func TestOfflineReservesOneQuery(t *testing.T) {
	req := DefaultSettings()
	req.Scenario = Offline
	req.MinQueryCount = 1 << 20
	tr := mustNew(t, req, QSL{1024, 1024})
	if c := cap(tr.offline); c > 2*tr.SampleCount() {
		t.Errorf("%d samples reserved for %d", c, tr.SampleCount())
	}
}

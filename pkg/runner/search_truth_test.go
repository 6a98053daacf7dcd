package runner

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// queueModel is a simulated model's capacity as a queue: c servers, FIFO,
// each execution drawn from the model's latency law.
type queueModel struct {
	servers int
	service func(*rand.Rand) time.Duration
}

func constantLaw(d time.Duration) func(*rand.Rand) time.Duration {
	return func(*rand.Rand) time.Duration { return d }
}

func lognormalLaw(median time.Duration, sigma float64) func(*rand.Rand) time.Duration {
	return func(r *rand.Rand) time.Duration {
		return time.Duration(float64(median) * math.Exp(sigma*r.NormFloat64()))
	}
}

// tailLatency is the percentile latency (sorted[floor(n·p)], as LoadGen)
// of an M/G/c queue fed by exactly the arrivals a Server run at qps would
// schedule: the same trace generator, settings and seeds.
func tailLatency(t testing.TB, s loadgen.Settings, m queueModel, qps float64) time.Duration {
	t.Helper()
	return tailLatencySeeded(t, s, m, qps, 0)
}

// tailLatencySeeded is tailLatency with the service draws' seed chosen.
func tailLatencySeeded(t testing.TB, s loadgen.Settings, m queueModel, qps float64, seed uint64) time.Duration {
	t.Helper()
	s.ServerTargetQPS = qps
	tr, err := trace.New(s.TraceSettings(), trace.QSL{TotalSampleCount: 1024, PerformanceSampleCount: 1024})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1+seed, 2))
	free := make([]time.Duration, m.servers)
	lat := make([]time.Duration, tr.Len())
	c := tr.Cursor()
	for i := range tr.Len() {
		q, _ := c.Next()
		at := q.Scheduled
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		start := max(at, free[k])
		free[k] = start + m.service(rng)
		lat[i] = free[k] - at
	}
	slices.Sort(lat)
	return lat[int(float64(len(lat))*s.ServerTargetLatencyPercentile)]
}

// truePeak is the largest rate whose simulated tail latency meets the
// bound, by bisection to 0.1%.
func truePeak(t testing.TB, s loadgen.Settings, m queueModel) float64 {
	t.Helper()
	return truePeakSeeded(t, s, m, 0)
}

func truePeakSeeded(t testing.TB, s loadgen.Settings, m queueModel, seed uint64) float64 {
	t.Helper()
	bound := time.Duration(s.ServerTargetLatencyNs)
	lo, hi := 1.0, 1.0
	for tailLatencySeeded(t, s, m, hi, seed) <= bound {
		lo, hi = hi, hi*2
	}
	return bisectPeak(lo, hi, func(q float64) bool { return tailLatencySeeded(t, s, m, q, seed) <= bound })
}

// bisectPeak narrows [lo, hi), lo passing and hi failing by ok, to 0.1% of
// lo, and returns the highest rate that passed: every truth's bisection.
func bisectPeak(lo, hi float64, ok func(float64) bool) float64 {
	for hi-lo > 0.001*lo {
		if mid := lo + (hi-lo)/2; ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// truthFor is the peak of the queue under exactly the arrivals the trials
// get (same trace settings, duration and seeds). A deterministic law has one
// answer; for a random law, whose service draws differ from sutproxy's, it
// is the median over draws realisations, so the truth is the queue's and not
// one lucky sample of it.
func truthFor(t testing.TB, s loadgen.Settings, m queueModel, draws int) float64 {
	t.Helper()
	if m.deterministic() {
		return truePeak(t, s, m)
	}
	peaks := make([]float64, draws)
	for i := range peaks {
		peaks[i] = truePeakSeeded(t, s, m, uint64(i))
	}
	slices.Sort(peaks)
	return peaks[draws/2]
}

// deterministic reports whether the law ignores its random source.
func (m queueModel) deterministic() bool {
	a := m.service(rand.New(rand.NewPCG(1, 1)))
	b := m.service(rand.New(rand.NewPCG(2, 2)))
	return a == b
}

// The simulation itself: an M/D/1 queue's tail grows with load, and one
// server at 1 ms cannot hold 1000/s within any bound.
func TestTruthSimulation(t *testing.T) {
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.MinDurationMs, s.MinQueryCount, s.ServerTargetLatencyNs, s.ServerTargetLatencyPercentile = 5000, 1, 10e6, 0.99
	md1 := queueModel{1, constantLaw(time.Millisecond)}
	if a, b := tailLatency(t, s, md1, 300), tailLatency(t, s, md1, 700); !(a < b) {
		t.Errorf("p99 at 300/s %v not below p99 at 700/s %v", a, b)
	}
	if p := tailLatency(t, s, md1, 50); p < time.Millisecond || p > 3*time.Millisecond {
		t.Errorf("p99 at 50/s = %v, want about the 1 ms service time", p)
	}
	peak := truePeak(t, s, md1)
	if peak >= 1000 || peak < 500 {
		t.Errorf("M/D/1 1 ms peak at p99 ≤ 10 ms = %v, want within (500, 1000)", peak)
	}
	md2 := truePeak(t, s, queueModel{2, constantLaw(time.Millisecond)})
	if md2 <= peak || md2 >= 2000 {
		t.Errorf("M/D/2 peak %v, want above M/D/1's %v and below 2000", md2, peak)
	}
}

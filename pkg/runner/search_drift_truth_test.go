package runner

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/sim"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The sutproxy models of issue 33 that fool a short trial, as flags, and
// their truths. degradeFlag is an M/D/1 of 1 ms for the first 2 s of a
// period of load and of 3 ms after, a period starting with each trial
// (restart=probe: at the first request after a run's readiness check);
// transientFlag an M/D/1 of 1 ms whose requests in the first 200 ms after
// each idle second are answered 80 ms late (so, in a search, the first
// trial's; add restart=probe for every trial's). The truths replay one
// trial from a fresh period.
const (
	degradeFlag   = "name=m,fn=echo,dims=16,max_batch=0,latency=constant:1ms,instances=1,degrade_after=2s,degrade_factor=3,restart=probe"
	transientFlag = "name=m,fn=echo,dims=16,max_batch=0,latency=constant:1ms,instances=1,transient=200ms,transient_latency=80ms"
)

// driftLaw is a sutproxy model with the degrade and transient laws as a
// queue: servers FIFO servers of a constant service time, re-implemented
// here from docs/sutproxy-models.md apart from pkg/sim's engine, so that the
// truth is the law's and not the code's.
type driftLaw struct {
	servers      int
	service      time.Duration
	after        time.Duration // 0: no degrade
	factor       float64
	window, hold time.Duration // window 0: no transient
	idle         time.Duration
}

// driftLawOf reads a --model flag of a constant law into a driftLaw.
func driftLawOf(t testing.TB, flag string) driftLaw {
	t.Helper()
	spec, err := sim.ParseModelFlag(flag)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Latency.Distribution != sim.Constant || spec.Latency.PerSample != 0 || spec.DynamicBatching != nil {
		t.Fatalf("%s: the drift truth knows constant laws without batching only", flag)
	}
	m := driftLaw{servers: max(spec.Instances, 1), service: spec.Latency.Value.D(), idle: spec.Idle.D()}
	if m.idle == 0 {
		m.idle = time.Second // sim's default
	}
	if g := spec.Degrade; g != nil {
		m.after, m.factor = g.After.D(), g.Factor
	}
	if tr := spec.Transient; tr != nil {
		m.window, m.hold = tr.Window.D(), tr.Latency.D()
	}
	return m
}

// latencies serves arrivals (ascending) as the law says: a period of load
// starts at the first arrival and at each one an idle gap after the one
// before; an execution that starts after or more into its request's period
// takes factor × service; a request arriving within window of its period's
// start is answered hold after its execution ends, its server free at the
// end all the same.
func (m driftLaw) latencies(arrivals []time.Duration) []time.Duration {
	free := make([]time.Duration, m.servers)
	for i := range free {
		free[i] = math.MinInt64 / 2
	}
	lat := make([]time.Duration, len(arrivals))
	var last, period time.Duration
	for i, at := range arrivals {
		if i == 0 || at-last >= m.idle {
			period = at
		}
		last = at
		k := 0
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		start := max(at, free[k])
		d := m.service
		if m.after > 0 && start-period >= m.after {
			d = time.Duration(float64(d) * m.factor)
		}
		free[k] = start + d
		end := free[k]
		if m.window > 0 && at-period < m.window {
			end += m.hold
		}
		lat[i] = end - at
	}
	return lat
}

// driftTail is the percentile latency (sorted[floor(n·p)], as LoadGen) of
// the timed queries of a Server run of s at qps against m, after a warm-up
// of warmup at the same rate: the trace's own schedule from its start for
// warmup, as pkg/loadgen's warm-up sends it, right before the timed run.
func driftTail(t testing.TB, s loadgen.Settings, m driftLaw, qps float64, warmup time.Duration) time.Duration {
	t.Helper()
	s.ServerTargetQPS = qps
	tr, err := trace.New(s.TraceSettings(), trace.QSL{TotalSampleCount: 1024, PerformanceSampleCount: 1024})
	if err != nil {
		t.Fatal(err)
	}
	var warm, timed []time.Duration
	c := tr.Cursor()
	for range tr.Len() {
		q, _ := c.Next()
		timed = append(timed, q.Scheduled)
		if q.Scheduled < warmup {
			warm = append(warm, q.Scheduled-warmup)
		}
	}
	lat := m.latencies(append(warm, timed...))[len(warm):]
	slices.Sort(lat)
	return lat[int(float64(len(lat))*s.ServerTargetLatencyPercentile)]
}

// driftPeak is the largest rate whose timed queries' tail meets s's bound,
// by doubling from lo and bisection to 0.1%; 0 when lo fails. lo is where a
// search would start: at a few QPS, Poisson gaps of an idle second are
// common and every such gap brings the transient back, so the law's curve
// passes only above some rate (and below the peak).
func driftPeak(t testing.TB, s loadgen.Settings, m driftLaw, lo float64, warmup time.Duration) float64 {
	t.Helper()
	ok := func(q float64) bool { return driftTail(t, s, m, q, warmup) <= time.Duration(s.ServerTargetLatencyNs) }
	if !ok(lo) {
		return 0
	}
	hi := 2 * lo
	for ok(hi) {
		lo, hi = hi, hi*2
	}
	return bisectPeak(lo, hi, ok)
}

// The degrade model's truths: a trial shorter than degrade_after sees the
// fast law and finds the M/D/1 1 ms peak; a full-length one the slow law,
// within 3% of the M/D/1 3 ms peak, a third of it. The steady-state peak a
// search must report is the full-length one.
func TestDegradeTruth(t *testing.T) {
	m := driftLawOf(t, degradeFlag)
	short := serverSettings(t, loadgen.RulesetLoadGen6, 1000)
	full := serverSettings(t, loadgen.RulesetLoadGen6, 20000)
	fast := truePeak(t, short, queueModel{1, constantLaw(time.Millisecond)})
	slow := truePeak(t, full, queueModel{1, constantLaw(3 * time.Millisecond)})
	scout := driftPeak(t, short, m, 50, 0)
	verify := driftPeak(t, full, m, 50, 0)
	t.Logf("FIGURE degrade truth: 1 s trial %.1f qps (M/D/1 1 ms %.1f), 20 s trial %.1f qps (M/D/1 3 ms %.1f)", scout, fast, verify, slow)
	if math.Abs(scout-fast) > 0.002*fast { // two bisections to 0.1%
		t.Errorf("a 1 s trial's peak %.1f, want the fast law's %.1f: the whole trial is within degrade_after", scout, fast)
	}
	if dev := (verify - slow) / slow; math.Abs(dev) > 0.03 {
		t.Errorf("a 20 s trial's peak %.1f is %+.1f%% from the slow law's %.1f", verify, 100*dev, slow)
	}
	if scout < 2.5*verify {
		t.Errorf("the short trial's peak %.1f is not far above the full one's %.1f: the model fools nobody", scout, verify)
	}
}

// The transient model's truths, for searches starting at 50 QPS (where an
// idle second between Poisson arrivals has probability e^-50): its
// steady-state peak is the M/D/1 1 ms one. A 3 s trial without a warm-up fails at every rate (200 ms of 80 ms
// answers are 6.7% of its queries, over the 1% the p99 allows); with the
// default warm-up (10% of the trial, 300 ms, longer than the transient) it
// finds the steady peak within 1%; a 60 s trial without one within 5% (the
// transient is 0.3% of its queries).
func TestTransientTruth(t *testing.T) {
	m := driftLawOf(t, transientFlag)
	short := serverSettings(t, loadgen.RulesetLoadGen6, 3000)
	long := serverSettings(t, loadgen.RulesetLoadGen6, 60000)
	steady := truePeak(t, short, queueModel{1, constantLaw(time.Millisecond)})
	steadyLong := truePeak(t, long, queueModel{1, constantLaw(time.Millisecond)})
	cold := driftPeak(t, short, m, 50, 0)
	warm := driftPeak(t, short, m, 50, 300*time.Millisecond)
	longCold := driftPeak(t, long, m, 50, 0)
	t.Logf("FIGURE transient truth: steady %.1f qps (60 s: %.1f); 3 s trial cold %.1f, warmed 300 ms %.1f; 60 s trial cold %.1f", steady, steadyLong, cold, warm, longCold)
	if cold != 0 {
		t.Errorf("a cold 3 s trial passes at %.1f qps; want no rate: the transient is 6.7%% of its queries", cold)
	}
	for _, q := range []float64{100, 300, 600} {
		if p99 := driftTail(t, short, m, q, 0); p99 < 80*time.Millisecond {
			t.Errorf("a cold 3 s trial at %v qps: p99 %v, want the transient's 80 ms and more", q, p99)
		}
	}
	if dev := (warm - steady) / steady; math.Abs(dev) > 0.01 || warm == 0 {
		t.Errorf("a warmed 3 s trial's peak %.1f is %+.2f%% from the steady %.1f", warm, 100*dev, steady)
	}
	if dev := (longCold - steadyLong) / steadyLong; math.Abs(dev) > 0.05 || longCold == 0 {
		t.Errorf("a cold 60 s trial's peak %.1f is %+.2f%% from the steady %.1f", longCold, 100*dev, steadyLong)
	}
}

// The re-implemented law agrees with itself where it must: without degrade
// or transient it is truePeak's M/D/1 queue, arrival for arrival.
func TestDriftLawWithoutDriftIsTheQueue(t *testing.T) {
	s := serverSettings(t, loadgen.RulesetLoadGen6, 3000)
	plain := driftLawOf(t, "name=m,fn=echo,dims=16,max_batch=0,latency=constant:2ms,instances=2")
	for _, q := range []float64{200, 800} {
		if a, b := driftTail(t, s, plain, q, 0), tailLatency(t, s, queueModel{2, constantLaw(2 * time.Millisecond)}, q); a != b {
			t.Errorf("at %v qps: p99 %v, the M/D/2 queue's %v", q, a, b)
		}
	}
}

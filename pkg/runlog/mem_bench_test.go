package runlog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/offheap"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// inlineSUT answers every query within IssueQuery, 1 ms after its issue on
// the virtual clock: the engine alone, no goroutine or request per query.
type inlineSUT struct{}

func (inlineSUT) Name() string { return "inline (Network SUT)" }
func (inlineSUT) IssueQuery(_ context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	c := q.Done(nil)
	c.At = q.Issued.Add(time.Millisecond)
	done(c)
}

// heapNow returns the live heap after a full collection.
// heapNow is the live heap plus what pkg/offheap holds (the latency record
// and the issue log live there: memory all the same), and the bytes the
// heap has allocated in all.
func heapNow() (live, total uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + uint64(offheap.Live()), m.TotalAlloc
}

// TestMemoryPerQuery (issue 28) measures where a Server run's memory goes,
// in bytes per query: a run at 20,000 QPS on a virtual clock (instant) for
// 5 and 20 s, its heap live after NewRun (trace and per-query state),
// after Execute (the records and the result) and after runlog.Write (the
// files), and what each phase allocated in all (TotalAlloc: what the
// collector must keep up with, and a bound on the phase's peak). Gated:
// NETLOADGEN_MEM_BENCH=1 (bench/mem.sh); NETLOADGEN_MEM_PROFILE=DIR
// writes a heap profile after Write (DIR/heap-<s>s.pprof: inuse_space
// is what the run keeps, alloc_space what each phase allocated).
func TestMemoryPerQuery(t *testing.T) {
	if os.Getenv("NETLOADGEN_MEM_BENCH") != "1" {
		t.Skip("set NETLOADGEN_MEM_BENCH=1 (bench/mem.sh)")
	}
	for _, secs := range []int{5, 20} {
		t.Run(fmt.Sprintf("server-20000qps-%ds", secs), func(t *testing.T) {
			memoryPerQuery(t, secs)
		})
	}
}

func memoryPerQuery(t *testing.T, secs int) {
	s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	s.Scenario = trace.Server
	s.ServerTargetQPS = 20_000
	s.ServerTargetLatencyNs = 10_000_000
	s.MinDurationMs = uint64(secs) * 1000
	s.MinQueryCount = 1
	s.Engine.EarlyVerdict = false
	clk := newVirtualClock()
	live0, tot0 := heapNow()
	run, err := loadgen.NewRun(s, inlineSUT{}, memoryQSL{total: 1024, perf: 1024},
		loadgen.WithClock(clk), loadgen.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	live1, tot1 := heapNow()
	res, err := run.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	live2, tot2 := heapNow()
	if err := runlog.Write(t.TempDir(), run, res, runlog.Options{}); err != nil {
		t.Fatal(err)
	}
	live3, tot3 := heapNow()
	if d := os.Getenv("NETLOADGEN_MEM_PROFILE"); d != "" {
		f, err := os.Create(filepath.Join(d, fmt.Sprintf("heap-%ds.pprof", secs)))
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	q := float64(run.Trace().Len())
	per := func(a, b uint64) float64 { return (float64(b) - float64(a)) / q }
	t.Logf("queries=%d validity=%s", run.Trace().Len(), res.Validity)
	t.Logf("live B/query: NewRun %.1f  +Execute %.1f  +Write %.1f  total %.1f",
		per(live0, live1), per(live1, live2), per(live2, live3), per(live0, live3))
	t.Logf("allocated B/query: NewRun %.1f  Execute %.1f  Write %.1f",
		per(tot0, tot1), per(tot1, tot2), per(tot2, tot3))
	runtime.KeepAlive(run)
	runtime.KeepAlive(res)
}

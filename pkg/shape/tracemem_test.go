package shape_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/shape"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// traceMemEnv runs TestTraceMemory (bench/trace-replay.sh): "trace" walks
// and runs a 10^6-line trace, "plain" runs a Poisson Server run of the
// same count and rate, each in its own process for its own max RSS.
const traceMemEnv = "NETLOADGEN_TRACE_MEM_BENCH"

// traceMemLines is the trace's length (issue 31: a 10^6-line trace
// replays in bounded memory).
const traceMemLines = 1_000_000

type nullSUT struct{}

func (nullSUT) Name() string { return "null" }
func (nullSUT) IssueQuery(_ context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	done(q.Done(nil))
}

type nullQSL struct{}

func (nullQSL) TotalSampleCount() int             { return 1024 }
func (nullQSL) PerformanceSampleCount() int       { return 1024 }
func (nullQSL) Load(context.Context, []int) error { return nil }

// maxRSS is the process's peak resident set so far, in MiB.
func maxRSS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

// TestTraceMemory: the max RSS of a 10^6-line Mooncake trace checked,
// walked twice and replayed against a null SUT at 50,000 requests a
// second (its 1,000 s of trace time at speed 50), against a plain
// Poisson Server run of the same count and rate. A figure, not a test:
// run by bench/trace-replay.sh.
func TestTraceMemory(t *testing.T) {
	mode := os.Getenv(traceMemEnv)
	if mode == "" {
		t.Skip("a benchmark: bench/trace-replay.sh sets " + traceMemEnv)
	}
	s, err := loadgen.NewSettings(loadgen.RulesetLoadGen6, trace.Server, "")
	if err != nil {
		t.Fatal(err)
	}
	s.ServerTargetQPS, s.ServerTargetLatencyNs = 50_000, 1e9
	s.MinDurationMs, s.MinQueryCount = 20_000, traceMemLines
	if mode == "trace" {
		path := filepath.Join(t.TempDir(), "million.jsonl")
		size := writeMillion(t, path)
		t.Logf("FIGURE trace file %d lines, %.1f MiB; max RSS after writing it %.1f MiB", traceMemLines, float64(size)/(1<<20), maxRSS())
		t0 := time.Now()
		sh, err := shape.OpenTrace(path, shape.TraceOptions{Speed: 50})
		if err != nil {
			t.Fatal(err)
		}
		check := time.Since(t0)
		for pass := range 2 {
			a, err := sh.Arrivals()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, ok := a.Next(); ok; _, ok = a.Next() {
				n++
			}
			if a.Err() != nil || n != traceMemLines {
				t.Fatalf("pass %d: %d arrivals, %v", pass, n, a.Err())
			}
		}
		t.Logf("FIGURE check %.2f s, then two passes: max RSS %.1f MiB", check.Seconds(), maxRSS())
		s.Shape = sh
	}
	r, err := loadgen.NewRun(s, nullSUT{}, nullQSL{}, loadgen.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Execute(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("FIGURE %s run: %d queries issued in %.1f s, issue lateness p99 %.1f µs; max RSS %.1f MiB, live heap after %.1f MiB",
		mode, res.SamplesIssued, float64(res.FinalQueryIssuedTimeNs)/1e9, p99(res)/1e3, maxRSS(), float64(ms.HeapAlloc)/(1<<20))
	if (mode == "trace" && res.SamplesIssued != traceMemLines) || res.SamplesIssued < traceMemLines || res.SamplesFailed != 0 {
		t.Fatalf("issued %d, failed %d; want %d, 0", res.SamplesIssued, res.SamplesFailed, traceMemLines)
	}
}

func p99(res *loadgen.Result) float64 {
	for _, p := range res.IssueLateness.Percentiles {
		if p.P == 0.99 {
			return float64(p.LatencyNs)
		}
	}
	return -1
}

// writeMillion writes traceMemLines Mooncake lines, a millisecond apart,
// each with four hash ids; it returns the file's size.
func writeMillion(t *testing.T, path string) int64 {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range traceMemLines {
		fmt.Fprintf(w, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%d, %d, %d, %d]}`+"\n",
			i, 1500+i%500, 1+i%300, i%7, 100+i%61, 4*i, 4*i+1)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	return fi.Size()
}

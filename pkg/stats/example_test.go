package stats_test

import (
	"fmt"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
)

// A Server trial: record every sample by sequence number from many
// goroutines, then judge the run as LoadGen does.
func Example() {
	const n, bound = 1000, 10 * time.Millisecond
	rec, _ := stats.NewLatencyRecord(n, stats.WithBound(bound))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				d := time.Duration(1+i%100) * 100 * time.Microsecond // 0.1 … 10 ms
				if i == 999 {
					_ = rec.Fail(i) // e.g. a transport error
					continue
				}
				_ = rec.Record(i, d)
			}
		})
	}
	wg.Wait() // every Record happens-before the reads below

	lat := rec.Latencies()
	p99, _ := lat.Percentile(0.99)
	allowed, _ := stats.MaxOverForPercentile(n, 0.99)
	f, _ := stats.NewMinPassingFinder(0.99, stats.EarlyStoppingConfidence)
	es := f.Server(n, rec.Over())
	fmt.Println("p99:", p99, "failed:", lat.Failed())
	fmt.Println("over bound:", rec.Over(), "allowed:", allowed, "constraint:", stats.Decide(allowed, n, n, rec.Over()))
	fmt.Println("early stopping met:", es.Met, "more queries needed:", es.MoreNeeded())
	// Output:
	// p99: 10ms failed: 1
	// over bound: 1 allowed: 9 constraint: pass
	// early stopping met: true more queries needed: 0
}

package trace_test

import (
	"fmt"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The engine walks a trace with a cursor: each query's offset from the
// start of the run and the QSL indices it carries, replayed from the
// generator's state (the trace holds no query).
func Example() {
	req := trace.DefaultSettings()
	req.Scenario = trace.Server
	req.ServerTargetQPS = 1000
	req.QSLRNGSeed = 2085463073848966840
	req.SampleIndexRNGSeed = 2747215439041700203
	req.ScheduleRNGSeed = 16159082839903944936
	tr, err := trace.New(req, trace.QSL{TotalSampleCount: 1024, PerformanceSampleCount: 1024})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := tr.Cursor()
	for range 3 {
		q, _ := c.Next()
		fmt.Println(q.Index, int64(q.Scheduled), q.Samples)
	}
	fmt.Println(tr.Len(), "queries")
	// Output:
	// 0 0 [784]
	// 1 1843654 [618]
	// 2 2301577 [960]
	// 10034 queries
}

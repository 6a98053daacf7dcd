package tracetest

import (
	"testing"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

func TestCollectIsEveryQueryInOrder(t *testing.T) {
	req := trace.DefaultSettings()
	req.Scenario = trace.Server
	req.ServerTargetQPS = 500
	req.MinDurationMs = 1000
	tr, err := trace.New(req, trace.QSL{TotalSampleCount: 64, PerformanceSampleCount: 64})
	if err != nil {
		t.Fatal(err)
	}
	qs := Collect(tr)
	if len(qs) != tr.Len() || qs[len(qs)-1].Scheduled != tr.LastScheduled() {
		t.Fatalf("%d queries of %d, the last at %v (trace: %v)", len(qs), tr.Len(), qs[len(qs)-1].Scheduled, tr.LastScheduled())
	}
	for i, q := range qs {
		if q.Index != i || (i > 0 && q.Scheduled < qs[i-1].Scheduled) {
			t.Fatalf("query %d: index %d at %v, after %v", i, q.Index, q.Scheduled, qs[max(i-1, 0)].Scheduled)
		}
	}
}

package loadgen

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Timeline gives each issued query's scheduled and issue times as the SUT
// saw them, and counts failing completions by the second they came in: a
// SingleStream run of 400 ms queries fails queries 1 (answered at 0.8 s)
// and 4 and 5 (at 2.0 s and 2.4 s).
func TestTimelineRecordsTimesAndFailureSeconds(t *testing.T) {
	clk := newFakeClock()
	sut := &fakeSUT{clock: clk, latency: constLatency(400 * time.Millisecond), advance: true,
		fail: func(id int) error {
			if id == 1 || id == 4 || id == 5 {
				return errors.New("HTTP 500")
			}
			return nil
		}}
	s := testSettings(t, RulesetLoadGen6, trace.SingleStream)
	s.MinQueryCount, s.MinDurationMs, s.Engine.EarlyVerdict = 8, 100, false
	r, res := execute(t, s, sut)
	tl := r.Timeline()
	got := sut.issued()
	var sched, issued []int64
	tl.EachQuery(func(q int, s, at int64) bool {
		if q != len(sched) {
			t.Fatalf("EachQuery gave query %d after %d queries", q, len(sched))
		}
		sched, issued = append(sched, s), append(issued, at)
		return true
	})
	if len(got) != 8 || tl.Queries != 8 || len(issued) != 8 || tl.SamplesPerQuery != 1 {
		t.Fatalf("%d queries issued; timeline has %d (%d walked), %d samples per query", len(got), tl.Queries, len(issued), tl.SamplesPerQuery)
	}
	start := got[0].Issued
	for i, q := range got {
		if issued[i] != int64(q.Issued.Sub(start)) || sched[i] != int64(q.Scheduled.Sub(start)) {
			t.Errorf("query %d: timeline scheduled %d, issued %d; the SUT saw %v, %v", i, sched[i], issued[i],
				q.Scheduled.Sub(start), q.Issued.Sub(start))
		}
	}
	if want := []int64{1, 0, 2}; !slices.Equal(tl.FailedBySecond, want) {
		t.Errorf("FailedBySecond = %v, want %v", tl.FailedBySecond, want)
	}
	if res.SamplesFailed != 3 || res.Unanswered != 0 {
		t.Errorf("%d failed, %d unanswered; want 3 and 0", res.SamplesFailed, res.Unanswered)
	}
}

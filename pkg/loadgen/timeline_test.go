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
	if len(got) != 8 || len(tl.Issued) != 8 || len(tl.Scheduled) != 8 || tl.SamplesPerQuery != 1 {
		t.Fatalf("%d queries issued; timeline has %d/%d, %d samples per query", len(got), len(tl.Issued), len(tl.Scheduled), tl.SamplesPerQuery)
	}
	start := got[0].Issued
	for i, q := range got {
		if tl.Issued[i] != int64(q.Issued.Sub(start)) || tl.Scheduled[i] != int64(q.Scheduled.Sub(start)) {
			t.Errorf("query %d: timeline scheduled %d, issued %d; the SUT saw %v, %v", i, tl.Scheduled[i], tl.Issued[i],
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

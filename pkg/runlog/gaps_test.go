package runlog_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// A run of several shards that stopped early has gaps in its issued
// queries: here a distributed run of two workers whose second was lost
// after 150 queries while the first went on to 600, over two seconds.
// Every file is written, and latency.hlog holds every completed sample,
// those past the gaps too: its intervals are cut by the issued queries'
// indices, not their count.
func TestWriteRunWithGaps(t *testing.T) {
	s := settingsFor(t, scenarioCase{ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server})
	s.ServerTargetQPS = 300
	m, err := loadgen.NewMergedRun(s, loadgen.QSLCounts{Total: 1024, Performance: 256}, 2, loadgen.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	cur := m.Trace().Cursor()
	var completed int64
	for {
		q, ok := cur.Next()
		if !ok || q.Index >= 600 {
			break
		}
		shard := q.Index % 2
		if shard == 1 && q.Index >= 150 {
			continue // the lost worker's
		}
		sched := int64(q.Scheduled)
		if err := m.MergeIssued(shard, q.Index, sched, sched+10_000); err != nil {
			t.Fatal(err)
		}
		if err := m.MergeSample(loadgen.SampleRecord{Seq: q.Index, LatencyNs: 2_000_000 + int64(q.Index)}); err != nil {
			t.Fatal(err)
		}
		completed++
	}
	res := m.FinishMerged(loadgen.MergedEnd{Reason: loadgen.StopCompleted, SUTName: "merged", Wall: time.Unix(1_700_000_000, 0),
		DurationNs: int64(2 * time.Second), Lost: []loadgen.LostWorker{{Name: "w-1", Shard: 1, AtNs: int64(time.Second)}}})
	if res.SamplesCompleted != completed {
		t.Fatalf("the merged run completed %d samples, want %d", res.SamplesCompleted, completed)
	}
	dir := t.TempDir()
	if err := runlog.Write(dir, m, res, runlog.Options{Logger: quietLogger()}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	h, intervals := readHlog(t, dir)
	if h.TotalCount() != completed || intervals < 2 {
		t.Errorf("latency.hlog: %d samples in %d intervals; want the %d completed, over the run's 2 s", h.TotalCount(), intervals, completed)
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, runlog.SummaryFile)), "worker w-1 lost") {
		t.Error("the summary does not name the lost worker")
	}
}

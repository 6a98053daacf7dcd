package runlog_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// A merged run whose shards stopped apart (a distributed run's lost
// worker): its issue log has gaps, and the last query issued is past the
// count of those issued. Its files are written whole, latency.hlog's last
// interval included.
func TestWriteShardsStoppedApart(t *testing.T) {
	s := loadgen.DefaultSettings(loadgen.RulesetLoadGen6)
	s.Scenario = trace.Server
	s.QSLRNGSeed, s.SampleIndexRNGSeed, s.ScheduleRNGSeed = 1, 2, 3
	s.MinDurationMs, s.MinQueryCount = 6000, 100
	s.ServerTargetQPS, s.ServerTargetLatencyNs = 200, 10_000_000
	quiet := slog.New(slog.DiscardHandler)
	m, err := loadgen.NewMergedRun(s, loadgen.QSLCounts{Total: 1000, Performance: 256}, 3, loadgen.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	cur := m.Trace().Cursor()
	for {
		q, ok := cur.Next()
		if !ok || q.Index >= 1000 {
			break
		}
		if q.Index%3 == 2 && q.Index > 30 {
			continue // shard 2 was lost after its first queries
		}
		if err := m.MergeIssued(q.Index%3, q.Index, int64(q.Scheduled), int64(q.Scheduled)+1000); err != nil {
			t.Fatal(err)
		}
		if err := m.MergeSample(loadgen.SampleRecord{Seq: q.Index, LatencyNs: 2_000_000}); err != nil {
			t.Fatal(err)
		}
	}
	res := m.FinishMerged(loadgen.MergedEnd{Reason: loadgen.StopCompleted, Wall: time.Unix(1_700_000_000, 0), DurationNs: 5e9,
		Lost: []loadgen.LostWorker{{Name: "w-2", Shard: 2, AtNs: 2e8}}})
	dir := t.TempDir()
	if err := runlog.Write(dir, m, res, runlog.Options{Logger: quiet}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "latency.hlog"))
	if err != nil || !strings.Contains(string(b), "samples completed") {
		t.Fatalf("latency.hlog: %v\n%s", err, b)
	}
}

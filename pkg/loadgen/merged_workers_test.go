package loadgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/trace"
)

// A merged run's progress counts from its workers' start (MergedStarted),
// not from its record's fixed start; its per-sample export names the worker
// of each sample's shard (NameWorkers).
func TestMergedRunWorkersNamedAndStarted(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	m, err := NewMergedRun(s, QSLCounts{Total: 1000, Performance: 256}, 2, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if p := m.Progress(); p.Started {
		t.Errorf("progress before the workers' start: %+v", p)
	}
	m.MergedStarted(time.Now().Add(-2 * time.Second))
	if p := m.Progress(); !p.Started || p.Elapsed < 2*time.Second || p.Elapsed > time.Minute {
		t.Errorf("progress 2 s after the start: started %v, elapsed %v", p.Started, p.Elapsed)
	}
	if err := m.NameWorkers([]string{"only-one"}); !errors.Is(err, ErrBadRecord) {
		t.Errorf("one name for two shards: %v", err)
	}
	if err := m.NameWorkers([]string{"w-a", "w-b"}); err != nil {
		t.Fatal(err)
	}
	cur := m.Trace().Cursor()
	for range 6 {
		q, _ := cur.Next()
		if err := m.MergeIssued(q.Index%2, q.Index, int64(q.Scheduled), int64(q.Scheduled)+1000); err != nil {
			t.Fatal(err)
		}
		if err := m.MergeSample(SampleRecord{Seq: q.Index, LatencyNs: 1_000_000}); err != nil {
			t.Fatal(err)
		}
	}
	m.FinishMerged(MergedEnd{Reason: StopCompleted, Wall: time.Unix(1_700_000_000, 0), DurationNs: 1e9})
	var buf bytes.Buffer
	if err := m.WriteSamples(&buf); err != nil {
		t.Fatal(err)
	}
	n := 0
	for sc := bufio.NewScanner(&buf); sc.Scan(); n++ {
		var l struct {
			Sample int
			Worker string
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Sample != n || l.Worker != []string{"w-a", "w-b"}[n%2] {
			t.Errorf("line %d: %s (%v)", n, sc.Bytes(), err)
		}
	}
	if n != 6 {
		t.Errorf("%d lines, want 6", n)
	}
	// A run on one host names no worker.
	single, _, _ := singleRun(t, s, 1)
	buf.Reset()
	if err := single.WriteSamples(&buf); err != nil || bytes.Contains(buf.Bytes(), []byte(`"worker"`)) {
		t.Errorf("a local run's export names a worker (%v)", err)
	}
}

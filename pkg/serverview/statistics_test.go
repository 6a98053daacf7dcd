package serverview

import (
	"strings"
	"testing"
)

func stats(name, version string, n, execs uint64, queueNs, inferNs uint64, batches ...BatchStats) ModelStats {
	return ModelStats{
		Name: name, Version: version, InferenceCount: n, ExecutionCount: execs,
		InferenceStats: InferStats{
			Success:       Duration{Count: n, NS: n*1000 + queueNs + inferNs},
			Queue:         Duration{Count: n, NS: queueNs},
			ComputeInput:  Duration{Count: n, NS: n * 400},
			ComputeInfer:  Duration{Count: n, NS: inferNs},
			ComputeOutput: Duration{Count: n, NS: n * 600},
		},
		BatchStats: batches,
	}
}

func TestDeltaAndSummary(t *testing.T) {
	before := []ModelStats{stats("m", "1", 10, 10, 5000, 20000, BatchStats{BatchSize: 1, ComputeInfer: Duration{Count: 10, NS: 20000}})}
	after := []ModelStats{stats("m", "1", 110, 60, 5000+300000, 20000+2000000,
		BatchStats{BatchSize: 1, ComputeInfer: Duration{Count: 30, NS: 60000}},
		BatchStats{BatchSize: 2, ComputeInfer: Duration{Count: 30, NS: 70000}})}
	d, note := Delta(before, after)
	if note != "" {
		t.Fatalf("note %q on counters that only rose", note)
	}
	if len(d) != 1 || d[0].InferenceCount != 100 || d[0].ExecutionCount != 50 {
		t.Fatalf("delta %+v, want 100 inferences in 50 executions", d)
	}
	if q := d[0].InferenceStats.Queue; q.Count != 100 || q.NS != 300000 {
		t.Errorf("queue delta %+v", q)
	}
	if len(d[0].BatchStats) != 2 || d[0].BatchStats[0].ComputeInfer.Count != 20 || d[0].BatchStats[1].ComputeInfer.Count != 30 {
		t.Errorf("batch stats delta %+v: want size 1 +20 executions, size 2 new with 30", d[0].BatchStats)
	}
	s := Summarize("m", "", d, note, 8000)
	if !s.Offered || s.Requests != 100 {
		t.Fatalf("summary %+v", s)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"queue_ns", s.QueueNs, 3000}, {"compute_infer_ns", s.ComputeInferNs, 20000},
		{"compute_input_ns", s.ComputeInputNs, 400}, {"compute_output_ns", s.ComputeOutputNs, 600},
		{"request_ns", s.RequestNs, 1000 + 3000 + 20000}, {"mean_batch_size", s.MeanBatchSize, 2},
		{"client_overhead_ns", s.ClientOverheadNs, 8000 - 24000},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// A counter that went down is a restart: no wrap-around, the note says so
// and the delta is what was counted since.
func TestDeltaCounterReset(t *testing.T) {
	before := []ModelStats{stats("m", "1", 1000, 1000, 1e6, 1e7), stats("m", "2", 5, 5, 10, 10)}
	after := []ModelStats{stats("m", "1", 40, 40, 4000, 40000), stats("m", "2", 7, 7, 20, 20)}
	d, note := Delta(before, after)
	if !strings.Contains(note, `m version "1"`) || strings.Contains(note, `"2"`) {
		t.Errorf("note %q: want version 1 named, not 2", note)
	}
	if d[0].InferenceCount != 40 || d[0].InferenceStats.Queue.NS != 4000 {
		t.Errorf("reset version's delta %+v: want after's counts", d[0])
	}
	if d[1].InferenceCount != 2 {
		t.Errorf("version 2 delta %d, want 2", d[1].InferenceCount)
	}
	for _, m := range d {
		if m.InferenceCount > 1<<40 || m.InferenceStats.Queue.NS > 1<<50 {
			t.Errorf("wrapped around: %+v", m)
		}
	}
	s := Summarize("m", "", d, note, 0)
	if s.Note != note || s.Requests != 42 || s.ClientOverheadNs != 0 {
		t.Errorf("summary %+v: want the note kept, 42 requests, no overhead without a latency", s)
	}
	if q, n := QueueSince(before, after); q != 0 || n != 0 {
		t.Errorf("live queue over a reset = %v over %d, want nothing", q, n)
	}
}

func TestDeltaNewAndGoneVersions(t *testing.T) {
	before := []ModelStats{stats("m", "1", 10, 10, 100, 100)}
	after := []ModelStats{stats("m", "2", 30, 15, 3000, 300)}
	d, note := Delta(before, after)
	if note != "" || len(d) != 1 || d[0].Version != "2" || d[0].InferenceCount != 30 {
		t.Errorf("delta %+v note %q: want version 2 whole, version 1 (gone) left out", d, note)
	}
	// The delta is a copy: changing it leaves after alone.
	after[0].BatchStats = []BatchStats{{BatchSize: 1}}
	d, _ = Delta(nil, after)
	d[0].BatchStats[0].BatchSize = 9
	if after[0].BatchStats[0].BatchSize != 1 {
		t.Error("Delta shares after's batch stats")
	}
}

func TestSummarizeEmpty(t *testing.T) {
	s := Summarize("m", "1", nil, "", 5000)
	if !s.Offered || s.Requests != 0 || s.QueueNs != 0 || s.ClientOverheadNs != 0 || s.Delta == nil {
		t.Errorf("summary of no requests %+v: want offered, zeros, an empty delta (not null)", s)
	}
	if n := NotOfferedStatistics(); n.Offered || n.Note != NotOffered {
		t.Errorf("not offered: %+v", n)
	}
}

func TestQueueSince(t *testing.T) {
	a := []ModelStats{stats("m", "1", 10, 10, 1000, 0)}
	b := []ModelStats{stats("m", "1", 30, 30, 1000+20*500, 0)}
	if q, n := QueueSince(a, b); q != 500 || n != 20 {
		t.Errorf("QueueSince = %v over %d, want 500 over 20", q, n)
	}
	if q, n := QueueSince(b, b); q != 0 || n != 0 {
		t.Errorf("QueueSince with nothing answered = %v over %d", q, n)
	}
}

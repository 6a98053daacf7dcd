package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

const ms = time.Millisecond

// newTestEngine serves one echo model of FP32 [-1,4] on a fake clock.
func newTestEngine(t *testing.T, instances int, lat LatencySpec, b *BatchingSpec) (*Server, *engine, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	spec := ModelSpec{
		Name: "m", MaxBatchSize: 8, Function: Echo, Instances: instances, Latency: lat, DynamicBatching: b,
		Inputs: []TensorSpec{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{-1, 4}}},
	}
	s, err := New([]ModelSpec{spec}, withClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e, err := s.engine("m", "")
	if err != nil {
		t.Fatal(err)
	}
	return s, e, clk
}

func constant(d time.Duration) LatencySpec {
	return LatencySpec{Distribution: Constant, Value: Duration(d)}
}

func mustEnqueue(t *testing.T, e *engine, n int, clk *fakeClock) *job {
	t.Helper()
	j, err := e.enqueue(n, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func state(e *engine, j *job) jobState {
	e.mu.Lock()
	defer e.mu.Unlock()
	return j.state
}

func TestQueuedRequestStartsWhenAnInstanceFrees(t *testing.T) {
	_, e, clk := newTestEngine(t, 2, constant(2*ms), nil)
	j1 := mustEnqueue(t, e, 1, clk)
	clk.Advance(ms / 2)
	j2 := mustEnqueue(t, e, 1, clk)
	j3 := mustEnqueue(t, e, 1, clk)
	if state(e, j1) != running || state(e, j2) != running {
		t.Fatalf("two instances: the first two requests should run")
	}
	if state(e, j3) != queued || e.gauges().queued != 1 {
		t.Fatalf("third request: state %v, queue %d; want queued behind two busy instances", state(e, j3), e.gauges().queued)
	}
	clk.Advance(2*ms - ms/2 - 1) // just before j1 ends
	if state(e, j3) != queued {
		t.Fatal("third request started before an instance freed")
	}
	clk.Advance(1)
	if state(e, j1) != finished || state(e, j3) != running {
		t.Fatalf("at 2ms: j1 %v, j3 %v; want j1 finished and j3 running", state(e, j1), state(e, j3))
	}
	if want := epoch.Add(2 * ms); !j3.start.Equal(want) {
		t.Errorf("j3 started at %v, want %v (when j1 ended)", j3.start.Sub(epoch), want.Sub(epoch))
	}
	clk.Advance(4 * ms)
	for i, j := range []*job{j1, j2, j3} {
		if err := e.wait(context.Background(), j, nil); err != nil {
			t.Errorf("job %d: %v", i+1, err)
		}
	}
	if want := epoch.Add(4 * ms); !j3.end.Equal(want) {
		t.Errorf("j3 ended at %v, want %v", j3.end.Sub(epoch), want.Sub(epoch))
	}
	if g := e.gauges(); g.busy != 0 || g.queued != 0 || g.executions != 3 {
		t.Errorf("after all: %+v, want idle, empty, 3 executions", g)
	}
}

func TestDynamicBatching(t *testing.T) {
	batching := &BatchingSpec{MaxBatchSize: 4, MaxQueueDelay: Duration(ms)}
	lat := LatencySpec{Distribution: Constant, Value: Duration(5 * ms), PerSample: Duration(ms)}
	type step struct {
		advance time.Duration
		enqueue []int // sample counts arriving after the advance
	}
	tests := []struct {
		name        string
		steps       []step
		wantBatches []int // samples of each execution in order
		wantStarts  []time.Duration
	}{
		{
			name:        "k queued within the delay form one batch when it expires",
			steps:       []step{{0, []int{1}}, {ms / 4, []int{1}}, {ms / 4, []int{1}}},
			wantBatches: []int{3},
			wantStarts:  []time.Duration{ms},
		},
		{
			name:        "a full batch starts without waiting",
			steps:       []step{{0, []int{1, 2, 1}}},
			wantBatches: []int{4},
			wantStarts:  []time.Duration{0},
		},
		{
			name:        "a request that does not fit sends the batch before it",
			steps:       []step{{0, []int{3, 2}}},
			wantBatches: []int{3, 2},
			// 3 samples take 5+3 ms; the 2 have waited past their delay by then.
			wantStarts: []time.Duration{0, 8 * ms},
		},
		{
			name:        "a backlog is drained in full batches",
			steps:       []step{{0, []int{4, 1, 1, 1, 1, 1, 1}}},
			wantBatches: []int{4, 4, 2},
			wantStarts:  []time.Duration{0, 9 * ms, 18 * ms},
		},
		{
			name:        "a lone request waits out the delay",
			steps:       []step{{0, []int{2}}},
			wantBatches: []int{2},
			wantStarts:  []time.Duration{ms},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e, clk := newTestEngine(t, 1, lat, batching)
			var jobs []*job
			for _, st := range tt.steps {
				clk.Advance(st.advance)
				for _, n := range st.enqueue {
					jobs = append(jobs, mustEnqueue(t, e, n, clk))
				}
			}
			clk.Advance(time.Second)
			var batches []int
			var starts []time.Duration
			for i := 0; i < len(jobs); {
				j := jobs[i]
				if err := e.wait(context.Background(), j, nil); err != nil {
					t.Fatal(err)
				}
				batches = append(batches, j.batch)
				starts = append(starts, j.start.Sub(epoch))
				// Jobs of one execution share its start; skip to the next.
				for i < len(jobs) && jobs[i].start.Equal(j.start) {
					i++
				}
			}
			if !equal(batches, tt.wantBatches) || !equal(starts, tt.wantStarts) {
				t.Errorf("executions %v starting at %v, want %v at %v", batches, starts, tt.wantBatches, tt.wantStarts)
			}
			st := e.statistics()
			if st.ExecutionCount != uint64(len(tt.wantBatches)) {
				t.Errorf("execution_count %d, want %d", st.ExecutionCount, len(tt.wantBatches))
			}
			var perSize = map[uint64]uint64{}
			for _, n := range tt.wantBatches {
				perSize[uint64(n)]++
			}
			for _, b := range st.BatchStats {
				if b.ComputeInfer.Count != perSize[b.BatchSize] {
					t.Errorf("batch_stats[%d]: %d executions, want %d", b.BatchSize, b.ComputeInfer.Count, perSize[b.BatchSize])
				}
				if want := uint64(b.BatchSize+5) * uint64(ms) * b.ComputeInfer.Count; b.ComputeInfer.NS != want {
					t.Errorf("batch_stats[%d]: compute_infer %d ns, want %d (5ms + 1ms per sample)", b.BatchSize, b.ComputeInfer.NS, want)
				}
			}
		})
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCancelledQueuedRequestLeavesTheQueue(t *testing.T) {
	tests := []struct {
		name     string
		batching *BatchingSpec
	}{
		{"behind a busy instance", nil},
		{"while a dynamic batch fills", &BatchingSpec{MaxBatchSize: 8, MaxQueueDelay: Duration(ms)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e, clk := newTestEngine(t, 1, constant(2*ms), tt.batching)
			var busy *job
			if tt.batching == nil {
				busy = mustEnqueue(t, e, 1, clk)
			}
			j := mustEnqueue(t, e, 1, clk)
			if state(e, j) != queued {
				t.Fatal("request should wait")
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := e.wait(ctx, j, nil); !errors.Is(err, context.Canceled) {
				t.Fatalf("wait: %v, want context.Canceled", err)
			}
			if g := e.gauges(); g.queued != 0 {
				t.Fatalf("queue holds %d after cancellation, want 0", g.queued)
			}
			clk.Advance(time.Second)
			want := uint64(0)
			if busy != nil {
				want = 1
			}
			if got := e.statistics().ExecutionCount; got != want {
				t.Errorf("%d executions, want %d: the cancelled request must not run", got, want)
			}
			if e.head != nil || e.tail != nil {
				t.Error("queue still links a job")
			}
		})
	}
}

func TestZeroLatencyUsesNoTimer(t *testing.T) {
	_, e, clk := newTestEngine(t, 1, LatencySpec{}, nil)
	for range 3 {
		j := mustEnqueue(t, e, 1, clk)
		if j.state != finished || j.done != nil {
			t.Fatalf("zero-latency request: state %v, channel %v; want finished at once", j.state, j.done)
		}
	}
	if n := clk.pending(); n != 0 {
		t.Errorf("%d timers armed for a zero-latency model", n)
	}
}

func TestCloseFailsQueuedRequests(t *testing.T) {
	s, e, clk := newTestEngine(t, 1, constant(2*ms), nil)
	running := mustEnqueue(t, e, 1, clk)
	waiting := mustEnqueue(t, e, 1, clk)
	s.Close()
	if err := e.wait(context.Background(), waiting, nil); !errors.Is(err, kserve.ErrUnavailable) {
		t.Errorf("queued request after Close: %v, want unavailable", err)
	}
	if _, err := e.enqueue(1, clk.Now()); !errors.Is(err, kserve.ErrUnavailable) {
		t.Errorf("new request after Close: %v, want unavailable", err)
	}
	clk.Advance(2 * ms)
	if err := e.wait(context.Background(), running, nil); err != nil {
		t.Errorf("running request after Close: %v, want it to finish", err)
	}
	if s.ServerReady(context.Background()) {
		t.Error("ready after Close")
	}
}

// A request handled after it arrived (the server woke late; its arrival is
// the kernel's timestamp) is served from its arrival, but never before its
// instance was free or its batch was complete.
func TestBackdatedArrivalStartsNoEarlierThanItsInstance(t *testing.T) {
	_, e, clk := newTestEngine(t, 1, constant(2*ms), nil)
	clk.Advance(10 * ms)
	// Arrived 300 µs before it was handled, instance idle: served from arrival.
	j1, err := e.enqueue(1, clk.Now().Add(-300*time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	if want := epoch.Add(10*ms - 300*time.Microsecond); !j1.start.Equal(want) {
		t.Fatalf("j1 started at %v, want its arrival %v", j1.start.Sub(epoch), want.Sub(epoch))
	}
	// j1 ends at 11.7 ms. j2 arrived at 11.5 ms but is handled only at
	// 11.9 ms: it starts when the instance freed, 11.7 ms, not at 11.5.
	clk.Advance(1900 * time.Microsecond)
	if state(e, j1) != finished {
		t.Fatal("j1 not finished at its end")
	}
	j2, err := e.enqueue(1, epoch.Add(11500*time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	if want := epoch.Add(11700 * time.Microsecond); !j2.start.Equal(want) {
		t.Errorf("j2 started at %v, want %v (when j1's instance freed)", j2.start.Sub(epoch), want.Sub(epoch))
	}
}

func TestTimedOutBatchStartsAtItsDeadline(t *testing.T) {
	_, e, clk := newTestEngine(t, 1, constant(2*ms), &BatchingSpec{MaxBatchSize: 4, MaxQueueDelay: Duration(ms)})
	clk.Advance(5 * ms)
	// Handled after its delay had passed (arrival back-dated 1.5 ms): the
	// batch is sent at once, but it was complete only at arrival + delay.
	j, err := e.enqueue(1, clk.Now().Add(-1500*time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	if want := epoch.Add(4500 * time.Microsecond); !j.start.Equal(want) {
		t.Errorf("batch started at %v, want %v (arrival + max queue delay)", j.start.Sub(epoch), want.Sub(epoch))
	}
}

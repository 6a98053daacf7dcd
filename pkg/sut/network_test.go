package sut

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// fakeClient records each prepared request and each send; a send blocks
// until release lets it go when gate is set.
type fakeClient struct {
	mu       sync.Mutex
	prepared []*kserve.InferRequest
	sent     []*kserve.InferRequest
	inflight int
	maxSeen  int
	gate     chan struct{}
	fail     error
	at       time.Time // the arrival every call reports
}

func (f *fakeClient) Prepare(req *kserve.InferRequest, _ *kserve.Expect) (Call, error) {
	f.mu.Lock()
	f.prepared = append(f.prepared, req)
	f.mu.Unlock()
	return func(ctx context.Context) (time.Time, error) {
		f.mu.Lock()
		f.sent = append(f.sent, req)
		f.inflight++
		f.maxSeen = max(f.maxSeen, f.inflight)
		f.mu.Unlock()
		if f.gate != nil {
			<-f.gate
		}
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
		return f.at, f.fail
	}, nil
}

func library(t *testing.T, batched bool) *qsl.Synthetic {
	t.Helper()
	shape := []int64{4}
	if batched {
		shape = []int64{-1, 4}
	}
	lib, err := qsl.NewSynthetic(kserve.ModelMetadata{Name: "m", Inputs: []kserve.TensorMetadata{
		{Name: "IN", Datatype: kserve.FP32, Shape: shape}}}, qsl.SyntheticOptions{Batched: batched, Total: 64, Performance: 64, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	all := make([]int, 64)
	for i := range all {
		all[i] = i
	}
	if err := lib.Load(t.Context(), all); err != nil {
		t.Fatal(err)
	}
	return lib
}

// collect gathers completions until every sample of q is covered.
type collector struct {
	mu    sync.Mutex
	got   []loadgen.Completion
	count int
	all   chan struct{}
	want  int
}

func newCollector(want int) *collector { return &collector{all: make(chan struct{}), want: want} }

func (c *collector) done(x loadgen.Completion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, x)
	c.count += x.Count
	if c.count == c.want {
		close(c.all)
	}
}

func TestBatchedQueryIsOneRequest(t *testing.T) {
	lib := library(t, true)
	fc := &fakeClient{}
	n, err := New(fc, lib, Options{Model: "m", MaxBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	q := loadgen.Query{ID: 3, Samples: []int{5, 6, 7}}
	c := newCollector(3)
	n.IssueQuery(t.Context(), q, c.done)
	<-c.all
	if len(fc.sent) != 1 {
		t.Fatalf("%d requests, want 1 batched request", len(fc.sent))
	}
	in := fc.sent[0].Inputs[0]
	if fmt.Sprint(in.Shape) != "[3 4]" {
		t.Errorf("shape %v, want [3 4]", in.Shape)
	}
	var want []byte
	for _, i := range q.Samples {
		want = append(want, lib.Sample(i).Inputs[0].Data...)
	}
	if string(in.Data) != string(want) {
		t.Error("batch data is not the samples' data in query order")
	}
	if len(c.got) != 1 || c.got[0].Query != 3 || c.got[0].Count != 3 || c.got[0].Err != nil {
		t.Errorf("completions %+v, want one covering the query", c.got)
	}
}

func TestUnbatchedModelSendsOneRequestPerSample(t *testing.T) {
	lib := library(t, false)
	fc := &fakeClient{}
	n, _ := New(fc, lib, Options{Model: "m"})
	c := newCollector(4)
	n.IssueQuery(t.Context(), loadgen.Query{Samples: []int{1, 2, 3, 4}}, c.done)
	<-c.all
	if len(fc.sent) != 4 {
		t.Fatalf("%d requests, want 4", len(fc.sent))
	}
	for _, r := range fc.sent {
		if fmt.Sprint(r.Inputs[0].Shape) != "[4]" {
			t.Errorf("unbatched request shape %v, want the sample's [4]", r.Inputs[0].Shape)
		}
	}
}

func TestOfflineSplitRespectsInflightCap(t *testing.T) {
	lib := library(t, true)
	fc := &fakeClient{gate: make(chan struct{})}
	n, _ := New(fc, lib, Options{Model: "m", MaxBatch: 8, BatchSize: 4, MaxInflight: 3})
	samples := make([]int, 50)
	for i := range samples {
		samples[i] = i % 64
	}
	c := newCollector(50)
	n.IssueQuery(t.Context(), loadgen.Query{Samples: samples}, c.done)
	// 13 requests (12 of 4, one of 2); let them through one at a time.
	for range 13 {
		fc.gate <- struct{}{}
	}
	<-c.all
	if fc.maxSeen > 3 {
		t.Errorf("%d requests in flight at once, cap is 3", fc.maxSeen)
	}
	if len(fc.sent) != 13 {
		t.Errorf("%d requests, want 13", len(fc.sent))
	}
	sort.Slice(c.got, func(i, j int) bool { return c.got[i].First < c.got[j].First })
	next := 0
	for _, g := range c.got {
		if g.First != next || g.Count > 4 {
			t.Fatalf("completions %+v do not tile the query in batches of at most 4", c.got)
		}
		next += g.Count
	}
}

func TestFailuresReachTheEngine(t *testing.T) {
	lib := library(t, true)
	boom := errors.New("boom")
	fc := &fakeClient{fail: boom}
	n, _ := New(fc, lib, Options{Model: "m", MaxBatch: 8})
	c := newCollector(1)
	n.IssueQuery(t.Context(), loadgen.Query{Samples: []int{9}}, c.done)
	<-c.all
	if !errors.Is(c.got[0].Err, boom) {
		t.Errorf("completion error %v, want the client's", c.got[0].Err)
	}
}

func TestBatchSizeAboveModelLimitIsRefused(t *testing.T) {
	if _, err := New(&fakeClient{}, library(t, true), Options{Model: "m", MaxBatch: 8, BatchSize: 16}); err == nil {
		t.Error("batch size 16 over max_batch_size 8 was accepted")
	}
}

// TestWholeQueries: a query that fits the model's batch goes as one request
// only when asked (MultiStream); otherwise BatchSize cuts it (Offline).
func TestWholeQueries(t *testing.T) {
	cases := []struct {
		name  string
		o     Options
		size  int
		sizes string // samples per request, sorted
	}{
		{"split by batch size", Options{MaxBatch: 8, BatchSize: 4}, 6, "[2 4]"},
		{"whole when it fits", Options{MaxBatch: 8, BatchSize: 4, WholeQueries: true}, 6, "[6]"},
		{"whole yet larger than the model's batch", Options{MaxBatch: 8, BatchSize: 4, WholeQueries: true}, 10, "[2 4 4]"},
		{"whole with an inflight cap", Options{MaxBatch: 8, BatchSize: 2, MaxInflight: 1, WholeQueries: true}, 5, "[5]"},
		{"default batch size is the model's", Options{MaxBatch: 8}, 10, "[2 8]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fc := &fakeClient{}
			c.o.Model = "m"
			n, err := New(fc, library(t, true), c.o)
			if err != nil {
				t.Fatal(err)
			}
			samples := make([]int, c.size)
			for i := range samples {
				samples[i] = i
			}
			col := newCollector(c.size)
			n.IssueQuery(t.Context(), loadgen.Query{Samples: samples}, col.done)
			<-col.all
			var sizes []int
			for _, r := range fc.sent {
				sizes = append(sizes, int(r.Inputs[0].Shape[0]))
			}
			sort.Ints(sizes)
			if fmt.Sprint(sizes) != c.sizes {
				t.Errorf("requests of %v samples, want %s", sizes, c.sizes)
			}
		})
	}
}

func TestCompletionCarriesTheTransportsArrival(t *testing.T) {
	issued := time.Unix(1000, 0)
	cases := []struct {
		name    string
		at      time.Time
		fail    error
		wantAt  time.Time
		batched bool
	}{
		{"arrival passed on", issued.Add(3 * time.Millisecond), nil, issued.Add(3 * time.Millisecond), false},
		{"batched query too", issued.Add(2 * time.Millisecond), nil, issued.Add(2 * time.Millisecond), true},
		{"no arrival: engine's now", time.Time{}, nil, time.Time{}, false},
		{"before the issue: clamped", issued.Add(-time.Second), nil, issued, false},
		{"failure: no arrival", issued.Add(time.Millisecond), errors.New("boom"), time.Time{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lib := library(t, tc.batched)
			fc := &fakeClient{at: tc.at, fail: tc.fail}
			o := Options{Model: "m"}
			samples := []int{1}
			if tc.batched {
				o.MaxBatch, samples = 8, []int{1, 2}
			}
			n, err := New(fc, lib, o)
			if err != nil {
				t.Fatal(err)
			}
			c := newCollector(len(samples))
			n.IssueQuery(t.Context(), loadgen.Query{Samples: samples, Issued: issued}, c.done)
			<-c.all
			if len(c.got) != 1 {
				t.Fatalf("%d completions, want 1", len(c.got))
			}
			if got := c.got[0].At; !got.Equal(tc.wantAt) {
				t.Errorf("At = %v, want %v", got, tc.wantAt)
			}
		})
	}
}

// TestPrepareEncodesEveryRequestOnce: Prepare encodes each request the
// trace sends once, without holding the trace: every loaded sample when a
// request can carry one, every distinct batch otherwise; issuing the whole
// trace then encodes nothing more.
func TestPrepareEncodesEveryRequestOnce(t *testing.T) {
	for _, tc := range []struct {
		name               string
		sc                 trace.Scenario
		spq, batch         int
		singles, batchesOK bool
	}{
		{"server", trace.Server, 1, 0, true, false},
		{"multistream batches of 3", trace.MultiStream, 8, 3, false, true},
		{"multistream batches of 4 and 1", trace.MultiStream, 9, 4, true, true},
		{"offline batches of 5 and 1", trace.Offline, 0, 5, true, true}, // 51 samples
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := trace.DefaultSettings()
			req.Scenario = tc.sc
			req.ServerTargetQPS = 1000
			req.MinDurationMs = 200
			req.MinQueryCount = 51
			req.OfflineExpectedQPS = 1 // Offline's query: min_query_count samples
			req.MultiStreamSamplesPerQuery = uint64(tc.spq)
			tr, err := trace.New(req, trace.QSL{TotalSampleCount: 64, PerformanceSampleCount: 48})
			if err != nil {
				t.Fatal(err)
			}
			fc := &fakeClient{}
			n, err := New(fc, library(t, tc.batch > 0), Options{Model: "m", MaxBatch: max(tc.batch, 0), BatchSize: tc.batch})
			if err != nil {
				t.Fatal(err)
			}
			if err := n.Prepare(t.Context(), tr); err != nil {
				t.Fatal(err)
			}
			sizes := map[int]int{} // batch size → requests prepared
			for _, r := range fc.prepared {
				sizes[int(r.Inputs[0].Shape[0])]++
			}
			if tc.batch == 0 {
				sizes = map[int]int{1: len(fc.prepared)} // unbatched: the shape has no batch dimension
			}
			if tc.singles != (sizes[1] == tr.DistributionEnd) || (!tc.singles && sizes[1] != 0) {
				t.Errorf("%d one-sample requests prepared, loaded set %d (want them: %v)", sizes[1], tr.DistributionEnd, tc.singles)
			}
			if tc.batchesOK != (len(fc.prepared) > sizes[1]) {
				t.Errorf("prepared %v by batch size", sizes)
			}
			before := len(fc.prepared)
			c := tr.Cursor()
			col := newCollector(tr.SampleCount())
			for q, ok := c.Next(); ok; q, ok = c.Next() {
				n.IssueQuery(t.Context(), loadgen.Query{ID: q.Index, FirstSample: q.Index * tr.SamplesPerQuery, Samples: q.Samples}, col.done)
			}
			<-col.all
			if after := len(fc.prepared); after != before {
				t.Errorf("issuing the trace encoded %d requests Prepare had not", after-before)
			}
		})
	}
}

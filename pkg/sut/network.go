package sut

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/qsl"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Options shape how queries become requests.
type Options struct {
	Model, Version string
	// MaxBatch is the model's max_batch_size: > 0 means a query of up to
	// MaxBatch samples goes as one request with a batch dimension; 0 means
	// one request per sample.
	MaxBatch int
	// BatchSize cuts a query larger than one request into requests of this
	// many samples (Offline); default MaxBatch, or 1 without batching.
	BatchSize int
	// MaxInflight caps a query's outstanding requests (Offline); 0 = no cap.
	MaxInflight int
	// WholeQueries sends a query of at most MaxBatch samples as one request
	// whatever BatchSize: a MultiStream query is one set of frames. Offline
	// leaves it off so its query is cut into BatchSize requests.
	WholeQueries bool
	// Timeout bounds one request; 0 = none (the engine's drain deadline
	// still ends the run).
	Timeout time.Duration
	// Name is the SUT name for the logs; it should contain "Network SUT".
	Name string
	// Expect checks every answer's protocol header against the model (its
	// name, the outputs' names, datatypes and shapes at the request's
	// batch size) on all four clients: a mismatch fails the request's
	// samples with kserve.ErrBadResponse. nil checks only the framing.
	Expect *kserve.Expect
	// Capture decodes every response and hands each sample's output bytes
	// to the engine (Completion.Data): accuracy mode and sampled accuracy
	// logging. It costs a decode per response, so performance runs leave it
	// off. The client must implement Capturer.
	Capture bool
}

// maxCached bounds the multi-sample requests encoded ahead; past it a
// request is encoded when issued (Offline batches of a huge trace).
const maxCached = 1 << 16

// Network is an engine SUT that sends queries to a KServe v2 endpoint.
type Network struct {
	client Client
	lib    qsl.Library
	o      Options

	single []Call          // by QSL index: one-sample requests
	capt   *capture        // nil unless Options.Capture
	multi  map[string]Call // by the samples' indices: batched requests
	mu     sync.Mutex      // guards multi after Prepare (issue-time encodes)
	keyBuf sync.Pool       // *[]byte scratch for multi keys
	work   *workers
}

// New builds a Network SUT; call Prepare before the run starts.
func New(client Client, lib qsl.Library, o Options) (*Network, error) {
	if o.Model == "" {
		return nil, fmt.Errorf("sut: no model")
	}
	if o.BatchSize <= 0 {
		o.BatchSize = max(o.MaxBatch, 1)
	}
	if o.MaxBatch > 0 && o.BatchSize > o.MaxBatch {
		return nil, fmt.Errorf("sut: batch size %d exceeds the model's max_batch_size %d", o.BatchSize, o.MaxBatch)
	}
	if o.MaxBatch == 0 {
		o.BatchSize = 1
	}
	if o.Name == "" {
		o.Name = "Network SUT"
	}
	n := &Network{client: client, lib: lib, o: o, multi: map[string]Call{}, work: newWorkers()}
	if o.Capture {
		c, ok := client.(Capturer)
		if !ok {
			return nil, fmt.Errorf("sut: the client cannot return responses (Options.Capture)")
		}
		n.capt = &capture{client: c, multi: map[string]CaptureCall{}}
	}
	return n, nil
}

// Name is the SUT's name for the logs.
func (n *Network) Name() string { return n.o.Name }

// Resends is how many requests the client sent again because they provably
// never reached the server (loadgen.Resender); 0 for a client that does not
// count them (grpc-go, whose own transparent retries are of calls that
// never reached the server's application, and are not exposed).
func (n *Network) Resends() uint64 {
	if r, ok := n.client.(interface{ Resends() uint64 }); ok {
		return r.Resends()
	}
	return 0
}

// Close ends the SUT's idle workers once the run is over; requests still in
// flight finish first.
func (n *Network) Close() error {
	n.work.close()
	return nil
}

// Prepare encodes, before the clock starts, every request the trace will
// send: one per loaded sample, and one per distinct batch of samples (up
// to maxCached), as prepareTrace plans them.
func (n *Network) Prepare(ctx context.Context, tr *trace.Trace) error {
	if n.capt != nil {
		return n.prepareCapture(ctx, tr)
	}
	n.single = make([]Call, n.lib.TotalSampleCount())
	return prepareTrace(ctx, tr, n.chunks(tr.SamplesPerQuery),
		func(s []int) error { _, err := n.prepareSingle(s[0]); return err },
		func(samples []int) error { _, err := n.multiCall(samples); return err },
		func() bool {
			n.mu.Lock()
			defer n.mu.Unlock()
			return len(n.multi) >= maxCached
		})
}

// prepareTrace walks what a trace sends, for Prepare: each request is cut
// from a query of tr.SamplesPerQuery samples by chunks. When a request can
// carry one sample, every loaded sample is encoded (single, given a
// one-sample window of the loaded set, which outlives the run): a query's
// samples are always loaded ones (MultiStream's padding repeats them), so
// the loaded set, bounded, stands for the queries, never walked. When one
// carries several, the queries are walked with a cursor, each batch
// encoded (multi) until full: the batches are the trace's, generated as
// the walk goes, never held.
func prepareTrace(ctx context.Context, tr *trace.Trace, chunks [][2]int, single, multi func([]int) error, full func() bool) error {
	return prepareShard(ctx, tr, Shard{}, func(int) [][2]int { return chunks }, single, multi, full)
}

// prepareShard is prepareTrace for what shard sh of the trace sends, its
// requests cut by chunksOf(a query's size): its own queries' batches (and
// of a split Offline query, its share's), as its issuer will send them.
func prepareShard(ctx context.Context, tr *trace.Trace, sh Shard, chunksOf func(size int) [][2]int, single, multi func([]int) error, full func() bool) error {
	chunks := chunksOf(sh.size(tr))
	hasSingle, hasMulti := false, false
	for _, ch := range chunks {
		if ch[1]-ch[0] == 1 {
			hasSingle = true
		} else {
			hasMulti = true
		}
	}
	if hasSingle {
		for i := range tr.DistributionEnd {
			if i%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if err := single(tr.LoadedSet[i : i+1 : i+1]); err != nil {
				return err
			}
		}
	}
	if !hasMulti {
		return nil
	}
	c := tr.Cursor()
	for q, ok := c.Next(); ok && !full(); q, ok = c.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		samples := sh.samples(tr, q)
		for _, ch := range chunks {
			if ch[1]-ch[0] == 1 || ch[1] > len(samples) || full() {
				continue
			}
			if err := multi(samples[ch[0]:ch[1]]); err != nil {
				return err
			}
		}
	}
	return nil
}

// chunks cuts a query of size samples into request ranges [from, to).
func (n *Network) chunks(size int) [][2]int {
	per := n.o.BatchSize
	if n.o.WholeQueries && n.o.MaxBatch > 0 && size <= n.o.MaxBatch {
		per = size
	}
	var out [][2]int
	for from := 0; from < size; from += per {
		out = append(out, [2]int{from, min(from+per, size)})
	}
	return out
}

// prepareSingle encodes and caches a one-sample request; only Prepare
// writes the cache, so issuing reads it without a lock.
func (n *Network) prepareSingle(index int) (Call, error) {
	if index < 0 || index >= len(n.single) {
		return nil, fmt.Errorf("sut: sample index %d outside the library", index)
	}
	if c := n.single[index]; c != nil {
		return c, nil
	}
	c, err := n.encode([]int{index})
	if err != nil {
		return nil, err
	}
	n.single[index] = c
	return c, nil
}

// singleCall is the issue-time lookup: a sample Prepare did not see (none,
// for a trace-driven run) is encoded on the spot.
func (n *Network) singleCall(index int) (Call, error) {
	if index >= 0 && index < len(n.single) {
		if c := n.single[index]; c != nil {
			return c, nil
		}
	}
	return n.encode([]int{index})
}

func (n *Network) multiCall(samples []int) (Call, error) {
	bp, _ := n.keyBuf.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	key := (*bp)[:0]
	for _, s := range samples {
		key = binary.AppendUvarint(key, uint64(s))
	}
	*bp = key
	n.mu.Lock()
	c, ok := n.multi[string(key)]
	n.mu.Unlock()
	if ok {
		n.keyBuf.Put(bp)
		return c, nil
	}
	c, err := n.encode(samples)
	if err == nil {
		n.mu.Lock()
		if len(n.multi) < maxCached {
			n.multi[string(key)] = c
		}
		n.mu.Unlock()
	}
	n.keyBuf.Put(bp)
	return c, err
}

// encode builds and prepares the request for samples.
func (n *Network) encode(samples []int) (Call, error) {
	req, err := n.request(samples)
	if err != nil {
		return nil, err
	}
	c, err := n.client.Prepare(req, n.o.Expect)
	if err != nil {
		return nil, fmt.Errorf("sut: encode samples %v: %w", samples, err)
	}
	return c, nil
}

// request builds the request for samples: their tensors concatenated along
// a new batch dimension when the model batches.
func (n *Network) request(samples []int) (*kserve.InferRequest, error) {
	first := n.lib.Sample(samples[0])
	if first == nil {
		return nil, fmt.Errorf("sut: sample %d was not loaded", samples[0])
	}
	req := &kserve.InferRequest{Model: n.o.Model, Version: n.o.Version}
	for i, in := range first.Inputs {
		t := kserve.Tensor{Name: in.Name, Datatype: in.Datatype}
		if n.o.MaxBatch > 0 {
			t.Shape = append([]int64{int64(len(samples))}, in.Shape...)
		} else {
			t.Shape = in.Shape
		}
		for _, idx := range samples {
			s := n.lib.Sample(idx)
			if s == nil {
				return nil, fmt.Errorf("sut: sample %d was not loaded", idx)
			}
			t.Data = append(t.Data, s.Inputs[i].Data...)
		}
		req.Inputs = append(req.Inputs, t)
	}
	return req, nil
}

// IssueQuery sends q without blocking: each request runs on a worker of its
// own (workers), so the Server scheduler never waits on the network.
func (n *Network) IssueQuery(ctx context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	if n.capt != nil {
		n.issueCapture(ctx, q, done)
		return
	}
	size := len(q.Samples)
	if size == 1 {
		c, err := n.singleCall(q.Samples[0])
		if err != nil {
			done(q.Done(err))
			return
		}
		n.work.do(func() {
			at, err := n.send(ctx, c)
			done(completion(q, q.Done(err), at))
		})
		return
	}
	chunks := n.chunks(size)
	if len(chunks) == 1 {
		n.work.do(func() {
			var at time.Time
			c, err := n.multiCall(q.Samples)
			if err == nil {
				at, err = n.send(ctx, c)
			}
			done(completion(q, q.Done(err), at))
		})
		return
	}
	go n.issueChunks(ctx, q, chunks, done)
}

// issueChunks sends a large query's requests with at most MaxInflight out.
func (n *Network) issueChunks(ctx context.Context, q loadgen.Query, chunks [][2]int, done func(loadgen.Completion)) {
	var sem chan struct{}
	if n.o.MaxInflight > 0 {
		sem = make(chan struct{}, n.o.MaxInflight)
	}
	var wg sync.WaitGroup
	for _, ch := range chunks {
		if sem != nil {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				// Cancelled: the remaining samples fail now rather than never.
				done(q.DoneRange(ch[0], ch[1]-ch[0], ctx.Err()))
				continue
			}
		}
		wg.Add(1)
		n.work.do(func() {
			defer wg.Done()
			samples := q.Samples[ch[0]:ch[1]]
			var c Call
			var err error
			var at time.Time
			if len(samples) == 1 {
				c, err = n.singleCall(samples[0])
			} else {
				c, err = n.multiCall(samples)
			}
			if err == nil {
				at, err = n.send(ctx, c)
			}
			done(completion(q, q.DoneRange(ch[0], ch[1]-ch[0], err), at))
			if sem != nil {
				<-sem
			}
		})
	}
	wg.Wait()
}

func (n *Network) send(ctx context.Context, c Call) (time.Time, error) {
	if n.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, n.o.Timeout)
		defer cancel()
	}
	return c(ctx)
}

// completion stamps c with the response's arrival from the transport, never
// before the query was handed over: a stamp from before it (a wall-clock
// step) cannot be this response's.
func completion(q loadgen.Query, c loadgen.Completion, at time.Time) loadgen.Completion {
	if c.Err == nil && !at.IsZero() {
		if at.Before(q.Issued) {
			at = q.Issued
		}
		c.At = at
	}
	return c
}

// TimeOne sends sample index as one request, once the connection is warm
// (one untimed request first), and returns how long the timed one took.
func (n *Network) TimeOne(ctx context.Context, index int) (time.Duration, error) {
	c, err := n.encode([]int{index})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c(ctx); err != nil {
		return 0, err
	}
	start := time.Now()
	at, err := c(ctx)
	if at.IsZero() {
		at = time.Now()
	}
	return at.Sub(start), err
}

package sut

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// OutputLayout describes one output in a captured sample's bytes: the
// outputs of a sample are concatenated in the order the response lists
// them, each holding its shape's elements (without the batch dimension) as
// raw little-endian bytes (BYTES: 4-byte length-prefixed elements).
type OutputLayout struct {
	Name     string          `json:"name"`
	Datatype kserve.DataType `json:"datatype"`
	Shape    []int64         `json:"shape"`
}

// capture is a Network's state when it returns responses.
type capture struct {
	client Capturer
	mu     sync.Mutex
	multi  map[string]CaptureCall // by the samples' indices
	layout []OutputLayout         // from the first response that split
}

// Layout returns the outputs of the captured bytes as the first successful
// response had them; nil before any, or when not capturing.
func (n *Network) Layout() []OutputLayout {
	if n.capt == nil {
		return nil
	}
	n.capt.mu.Lock()
	defer n.capt.mu.Unlock()
	return n.capt.layout
}

func captureKey(samples []int) string {
	var b []byte
	for _, s := range samples {
		b = binary.AppendUvarint(b, uint64(s))
	}
	return string(b)
}

// captureCall returns the prepared request for samples, encoding it if
// Prepare did not; only Prepare caches (up to maxCached), so an accuracy
// run over a large data set does not keep every encoded request.
func (n *Network) captureCall(samples []int, keep bool) (CaptureCall, error) {
	key := captureKey(samples)
	c := n.capt
	c.mu.Lock()
	call, ok := c.multi[key]
	c.mu.Unlock()
	if ok {
		return call, nil
	}
	req, err := n.request(samples)
	if err != nil {
		return nil, err
	}
	call, err = c.client.PrepareCapture(req)
	if err != nil {
		return nil, fmt.Errorf("sut: encode samples %v: %w", samples, err)
	}
	if keep {
		c.mu.Lock()
		if len(c.multi) < maxCached {
			c.multi[key] = call
		}
		c.mu.Unlock()
	}
	return call, nil
}

// prepareCapture encodes the trace's requests before the clock starts, as
// prepareTrace plans them; the cache (one-sample requests included) keeps
// up to maxCached.
func (n *Network) prepareCapture(ctx context.Context, tr *trace.Trace) error {
	call := func(samples []int) error { _, err := n.captureCall(samples, true); return err }
	return prepareTrace(ctx, tr, n.chunks(tr.SamplesPerQuery), call, call,
		func() bool {
			n.capt.mu.Lock()
			defer n.capt.mu.Unlock()
			return len(n.capt.multi) >= maxCached
		})
}

// issueCapture is IssueQuery when capturing: each request's response is
// decoded and cut into the samples' bytes.
func (n *Network) issueCapture(ctx context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	chunks := n.chunks(len(q.Samples))
	go func() {
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
					done(q.DoneRange(ch[0], ch[1]-ch[0], ctx.Err()))
					continue
				}
			}
			wg.Go(func() {
				c := q.DoneRange(ch[0], ch[1]-ch[0], nil)
				c.Data, c.Err = n.sendCapture(ctx, q.Samples[ch[0]:ch[1]])
				done(c)
				if sem != nil {
					<-sem
				}
			})
		}
		wg.Wait()
	}()
}

func (n *Network) sendCapture(ctx context.Context, samples []int) ([][]byte, error) {
	call, err := n.captureCall(samples, false)
	if err != nil {
		return nil, err
	}
	if n.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, n.o.Timeout)
		defer cancel()
	}
	resp, err := call(ctx)
	if err != nil {
		return nil, err
	}
	if err := n.o.Expect.CheckResponse(resp, len(samples)); err != nil {
		return nil, err
	}
	data, layout, err := splitResponse(resp, len(samples), n.o.MaxBatch > 0)
	if err != nil {
		return nil, err
	}
	n.capt.mu.Lock()
	if n.capt.layout == nil {
		n.capt.layout = layout
	}
	n.capt.mu.Unlock()
	return data, nil
}

// splitResponse cuts a response of n samples into each sample's bytes: the
// sample's slice of every output, concatenated in response order.
func splitResponse(resp *kserve.InferResponse, n int, batched bool) ([][]byte, []OutputLayout, error) {
	if len(resp.Outputs) == 0 {
		return nil, nil, fmt.Errorf("%w: the response has no outputs", kserve.ErrMalformed)
	}
	per := make([][]byte, n)
	layout := make([]OutputLayout, 0, len(resp.Outputs))
	for _, out := range resp.Outputs {
		shape := out.Shape
		if batched {
			if len(shape) == 0 || shape[0] != int64(n) {
				return nil, nil, fmt.Errorf("%w: output %q has shape %v for a batch of %d", kserve.ErrMalformed, out.Name, out.Shape, n)
			}
			shape = shape[1:]
		} else if n != 1 {
			return nil, nil, fmt.Errorf("%w: %d samples in a request without a batch dimension", kserve.ErrMalformed, n)
		}
		bounds, err := splitBounds(out, n)
		if err != nil {
			return nil, nil, err
		}
		for k := range n {
			per[k] = append(per[k], out.Data[bounds[k]:bounds[k+1]]...)
		}
		layout = append(layout, OutputLayout{Name: out.Name, Datatype: out.Datatype, Shape: slices.Clone(shape)})
	}
	return per, layout, nil
}

// splitBounds is the byte offsets of n equal samples of t (n+1 values).
func splitBounds(t kserve.Tensor, n int) ([]int, error) {
	b := make([]int, n+1)
	count := kserve.ElementCount(t.Shape)
	if size := t.Datatype.Size(); size > 0 {
		if int64(len(t.Data)) != count*int64(size) {
			return nil, fmt.Errorf("%w: output %q: %d bytes for shape %v of %s", kserve.ErrMalformed, t.Name, len(t.Data), t.Shape, t.Datatype)
		}
		for k := range b {
			b[k] = k * len(t.Data) / n
		}
		return b, nil
	}
	perSample := int(count) / n
	off := 0
	for k := range n {
		b[k] = off
		for range perSample {
			if off+4 > len(t.Data) {
				return nil, fmt.Errorf("%w: output %q: BYTES data ends inside an element's length", kserve.ErrMalformed, t.Name)
			}
			l := int(binary.LittleEndian.Uint32(t.Data[off:]))
			if l > len(t.Data)-off-4 {
				return nil, fmt.Errorf("%w: output %q: BYTES element overruns the data", kserve.ErrMalformed, t.Name)
			}
			off += 4 + l
		}
	}
	b[n] = off
	return b, nil
}

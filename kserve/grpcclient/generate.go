package grpcclient

// This file is the generative client over ModelStreamInfer (genai.Client,
// API kserve-stream) on grpc-go, with Triton's LLM conventions (package
// kserve/genwire encodes the requests and reads the responses).
//
// One stream per pooled connection carries many requests at once, told
// apart by request id, as Triton's own clients and perf_analyzer do: a
// stream per request would cost a HEADERS frame pair and a receiving
// goroutine per request, and one reader per connection keeps the
// per-token cost to one message walk (genWire).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/genwire"
	"github.com/netloadgen/netloadgen/kserve/inferencepb"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// Triton's LLM input names (genwire's).
const (
	GenTextInput          = genwire.TextInput
	GenMaxTokens          = genwire.MaxTokens
	GenStream             = genwire.Stream
	GenIgnoreEOS          = genwire.IgnoreEOS
	GenSamplingParameters = genwire.SamplingParameters
)

// GenerateOptions shape a Generator's requests to the model (read from its
// configuration by the caller).
type GenerateOptions = genwire.Options

// Generator sends generative requests over ModelStreamInfer on a Client's
// connections; it implements genai.Client. It is safe for concurrent use.
// Close it before its Client.
type Generator struct {
	c      *Client
	opts   GenerateOptions
	ctx    context.Context // the streams' lifetime: Close cancels it
	cancel context.CancelFunc
	slots  []genSlot // one per pooled connection
	next   atomic.Uint64
	wg     sync.WaitGroup // the streams' receivers
	// capturing: a request asked for its content (genai.Request.Capture),
	// so the receivers keep each response's bytes from then on; other
	// runs never copy them.
	capturing atomic.Bool
}

var _ genai.Client = (*Generator)(nil)

// genSlot is a pooled connection's current stream, opened on first use
// and again after one ends.
type genSlot struct {
	mu  sync.Mutex // guards cur and cur's pending, and serialises sends
	cur *genStream
}

// genStream is one ModelStreamInfer stream and its requests in flight.
type genStream struct {
	g       *Generator
	slot    int
	st      inferencepb.GRPCInferenceService_ModelStreamInferClient
	cancel  context.CancelFunc
	pending map[uint64]*genwire.Call // by request id; under the slot's mu
}

// NewGenerator builds a generative client on c's connections.
func (c *Client) NewGenerator(opts GenerateOptions) *Generator {
	ctx, cancel := context.WithCancel(context.Background())
	return &Generator{c: c, opts: opts, ctx: ctx, cancel: cancel, slots: make([]genSlot, len(c.conns))}
}

// Connect opens the client's connections and a stream on each, so that
// a run's first requests pay for neither.
func (g *Generator) Connect(ctx context.Context) error {
	if err := g.c.Connect(ctx); err != nil {
		return err
	}
	for i := range g.slots {
		sl := &g.slots[i]
		sl.mu.Lock()
		_, err := g.streamLocked(i)
		sl.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// Close ends every stream (requests in flight end with an error) and
// waits for their receivers; the Client stays open.
func (g *Generator) Close() error {
	g.cancel()
	g.wg.Wait()
	return nil
}

// Generate sends req on the next connection's stream; h hears its
// responses from that stream's receiver. The send is a write into grpc-go's
// buffers, not a wait for the network (HTTP/2 flow control aside: the
// windows are 16 MiB).
func (g *Generator) Generate(ctx context.Context, req *genai.Request, h genai.Handler) {
	msg, err := g.request(req)
	if err != nil {
		h.End(time.Now(), genai.Usage{}, err)
		return
	}
	call := genwire.NewCall(ctx, req, h)
	if call.Captures() {
		g.capturing.Store(true)
	}
	i := int((g.next.Add(1) - 1) % uint64(len(g.slots)))
	sl := &g.slots[i]
	sl.mu.Lock()
	s, err := g.streamLocked(i)
	if err == nil {
		if _, dup := s.pending[req.ID]; dup {
			err = &kserve.Error{Code: codes.InvalidArgument, Message: fmt.Sprintf("request id %d is already in flight", req.ID)}
		} else {
			s.pending[req.ID] = call
			if err = s.st.SendMsg(&msg); err != nil {
				delete(s.pending, req.ID)
				err = s.sendFail(err)
			}
		}
	}
	sl.mu.Unlock()
	if err != nil {
		call.End(time.Now(), genai.Usage{}, err)
	}
}

// sendFail is the error of a request whose send failed: it never reached
// the server.
func (s *genStream) sendFail(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: ModelStreamInfer stream ended before the request was sent", kserve.ErrTransport)
	}
	return grpcFail(s.g.ctx, err, false)
}

// streamLocked is slot i's stream, opened if it has none; the slot's mu is
// held.
func (g *Generator) streamLocked(i int) (*genStream, error) {
	sl := &g.slots[i]
	if sl.cur != nil {
		return sl.cur, nil
	}
	if err := g.ctx.Err(); err != nil {
		return nil, fmt.Errorf("generator closed: %w", err)
	}
	ctx, cancel := context.WithCancel(g.ctx)
	st, err := g.c.clients[i].ModelStreamInfer(ctx)
	if err != nil {
		cancel()
		return nil, grpcFail(ctx, err, false)
	}
	s := &genStream{g: g, slot: i, st: st, cancel: cancel, pending: make(map[uint64]*genwire.Call)}
	sl.cur = s
	g.wg.Add(1)
	go s.recv()
	return s, nil
}

// request is req as a ModelInferRequest, encoded.
func (g *Generator) request(req *genai.Request) (genRequest, error) {
	return genwire.AppendRequest(nil, &g.opts, req)
}

// genRequest is an encoded ModelInferRequest, which the codec sends as it
// is.
type genRequest []byte

// genWire is a response as the codec reads it (genwire.Response), with
// its bytes kept for a request that captures its content.
type genWire struct {
	genwire.Response
	// keepRaw asks the codec to keep the message's bytes in raw.
	keepRaw bool
	raw     []byte
}

// recv reads the stream's responses until it ends, then fails whatever is
// still in flight on it.
func (s *genStream) recv() {
	defer s.g.wg.Done()
	var w genWire
	for {
		w.keepRaw = s.g.capturing.Load()
		err := s.st.RecvMsg(&w)
		at := s.g.c.arrival(uint64(s.slot))
		if at.IsZero() {
			at = time.Now()
		}
		if err == nil {
			err = s.deliver(at, &w)
		} else {
			err = s.streamFail(err)
		}
		if err != nil {
			s.endAll(at, err)
			return
		}
	}
}

// streamFail is the error that ends the stream's requests in flight.
func (s *genStream) streamFail(err error) error {
	if errors.Is(err, io.EOF) {
		return genwire.ErrStreamEnded
	}
	answered := false
	if h, _ := s.st.Header(); len(h) > 0 {
		answered = true
	}
	return grpcFail(s.g.ctx, err, answered)
}

// deliver hands one response to its request; an error ends the stream.
func (s *genStream) deliver(at time.Time, w *genWire) error {
	final := genwire.Final(&w.Response, s.g.opts.OneResponse)
	sl := &s.g.slots[s.slot]
	sl.mu.Lock()
	call := s.pending[w.ID]
	if !w.IDOK || w.Err != nil {
		call = nil
	}
	if call != nil && final {
		delete(s.pending, w.ID)
	}
	sl.mu.Unlock()
	return genwire.Deliver(at, &w.Response, w.raw, call, final)
}

// endAll ends the stream: every request in flight on it fails with err,
// and the slot opens a new stream for the next request.
func (s *genStream) endAll(at time.Time, err error) {
	sl := &s.g.slots[s.slot]
	sl.mu.Lock()
	if sl.cur == s {
		sl.cur = nil
	}
	pending := s.pending
	s.pending = nil
	sl.mu.Unlock()
	s.cancel()
	ids := make([]uint64, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	slices.Sort(ids) // in sending order: a handler may care
	for _, id := range ids {
		pending[id].End(at, genai.Usage{}, err)
	}
}

package sim

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"

	"google.golang.org/grpc/codes"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/kserve/server"
)

// llmEngine runs one version of an LLM model in real time: llmBatch's
// steps on timers. A step starts at the nominal end of the one before (not
// when that one's timer fired), so timer lateness delays tokens but does
// not leak into the model's capacity; an idle engine costs nothing.
type llmEngine struct {
	spec *ModelSpec
	clk  clock
	// stats are the version's Triton statistics (its tensor engine's):
	// success, queue (arrival to first step) and compute_infer (first
	// step to last token) per request answered in full.
	stats *requestStats

	mu   sync.Mutex
	b    llmBatch
	busy bool // a step is running (its timer armed)
	// curStart and curEnd are the running step's nominal start and end.
	curStart, curEnd time.Time
	timer            stopper
	lastEnd          time.Time // the last step's nominal end
	closed           bool

	// wakeLead is how much before a step's nominal end its timer fires, so
	// that the median token reaches its reader at the nominal end rather
	// than a timer's and a scheduler's wake-up later (learnt from when
	// readers get their tokens, on the real clock only, as the tensor
	// engine's is). The steps' nominal times, hence the model's capacity,
	// do not move.
	wakeLead   atomic.Int64
	compensate bool
}

func newLLMEngine(spec *ModelSpec, clk clock, stats *requestStats) *llmEngine {
	_, real := clk.(realClock)
	return &llmEngine{spec: spec, clk: clk, stats: stats, b: llmBatch{spec: spec.LLM}, compensate: real}
}

// submit queues a sequence that arrived at arrival and starts a step if
// the model was idle. A sequence that arrived before the running step
// started (its handler was slower than the step's timer) joins that step,
// lengthening it by its cost, as the law says it would have: otherwise
// every such request would wait a whole step more than the truth.
func (e *llmEngine) submit(s *llmSeq) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errClosed
	}
	if e.busy && !s.arrival.After(e.curStart) && len(e.b.queue) == 0 && len(e.b.running) < e.b.spec.MaxSeqs && e.timer.Stop() {
		s.prefill, s.started = true, e.curStart
		e.b.running = append(e.b.running, s)
		e.curEnd = e.curEnd.Add(e.b.spec.StepPerSeq.D() + time.Duration(s.input)*e.b.spec.PrefillPerToken.D())
		e.arm()
		return nil
	}
	e.b.queue = append(e.b.queue, s)
	if !e.busy {
		start := s.arrival
		if start.Before(e.lastEnd) {
			start = e.lastEnd
		}
		e.step(start)
	}
	return nil
}

// step starts the step at start (mu held), or goes idle.
func (e *llmEngine) step(start time.Time) {
	d, ok := e.b.begin()
	if !ok {
		e.busy = false
		e.lastEnd = start
		return
	}
	e.busy, e.curStart, e.curEnd = true, start, start.Add(d)
	for _, s := range e.b.running {
		if s.prefill {
			s.started = start
		}
	}
	e.arm()
}

// arm sets the running step's timer. It runs on real time from now: start
// may be a nominal instant already past (steps run back to back), and a
// delay from it would carry each timer's lateness into the next.
func (e *llmEngine) arm() {
	e.timer = e.clk.AfterFunc(e.curEnd.Sub(e.clk.Now())-time.Duration(e.wakeLead.Load()), e.stepDone)
}

// stepDone ends the running step and starts the next.
func (e *llmEngine) stepDone() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	end := e.curEnd
	e.b.end(end, e.deliver)
	e.step(end)
}

// deliver hands a token to its sequence's reader; out has room for every
// token, so this never blocks.
func (e *llmEngine) deliver(s *llmSeq, t llmToken) {
	s.out <- t
	if t.index == s.output-1 {
		close(s.out)
		e.stats.success.add(t.at.Sub(s.arrival))
		e.stats.queue.add(s.started.Sub(s.arrival))
		e.stats.computeInfer.add(t.at.Sub(s.started))
		e.stats.inferences.Add(1)
		e.stats.lastMS.Store(t.at.UnixMilli())
	}
}

// cancel drops a sequence whose caller left.
func (e *llmEngine) cancel(s *llmSeq) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.cancelled || s.emitted == s.output || s.err != nil {
		return
	}
	s.cancelled = true
	e.b.remove(s)
}

// close fails every queued and running sequence.
func (e *llmEngine) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	for _, list := range [][]*llmSeq{e.b.queue, e.b.running} {
		for _, s := range list {
			if !s.cancelled {
				s.err = errClosed
				close(s.out)
			}
		}
	}
	e.b.queue, e.b.running = nil, nil
}

// llmStream is one request's answer (server.GenStream).
type llmStream struct {
	e           *llmEngine
	s           *llmSeq
	stop        bool // the model's own end (not max_tokens)
	fault       string
	closeOnce   sync.Once
	inputTokens int
}

func (st *llmStream) InputTokens() int { return st.inputTokens }
func (st *llmStream) Fault() string    { return st.fault }

func (st *llmStream) Next(ctx context.Context) (server.GenToken, bool, error) {
	select {
	case t, ok := <-st.s.out:
		if !ok {
			// Written before out was closed: the channel orders it.
			return server.GenToken{}, false, st.s.err
		}
		if st.e.compensate {
			learnLead(&st.e.wakeLead, st.e.clk.Now().Sub(t.at))
		}
		tok := server.GenToken{Text: TokenText(t.index), ID: TokenID(t.index), Index: t.index}
		if t.index == st.s.output-1 {
			tok.Last, tok.Reason = true, "length"
			if st.stop {
				tok.Reason = "stop"
			}
		}
		return tok, true, nil
	case <-ctx.Done():
		return server.GenToken{}, false, contextError(ctx.Err())
	}
}

func (st *llmStream) Close() { st.closeOnce.Do(func() { st.e.cancel(st.s) }) }

// GenerativeModels lists the LLM models, in the order given to New.
func (s *Server) GenerativeModels(context.Context) []string {
	var out []string
	for _, name := range s.names {
		if s.models[name].spec.LLM != nil {
			out = append(out, name)
		}
	}
	return out
}

// Generative says whether model is an LLM model.
func (s *Server) Generative(_ context.Context, model string) bool {
	m := s.models[model]
	return m != nil && m.spec.LLM != nil
}

// Generate starts a request on an LLM model.
func (s *Server) Generate(ctx context.Context, req *server.GenRequest) (server.GenStream, error) {
	e, err := s.engine(req.Model, req.Version)
	if err != nil {
		return nil, err
	}
	l := e.spec.LLM
	if l == nil {
		return nil, kserve.Errorf(codes.InvalidArgument, "model %q is not generative (an llm model is)", req.Model)
	}
	if req.MaxTokens < 0 || req.MaxTokens > l.MaxTokensLimit {
		return nil, kserve.Errorf(codes.InvalidArgument, "max_tokens %d is not in [1, %d] for model %q", req.MaxTokens, l.MaxTokensLimit, req.Model)
	}
	n, stop := l.outputLen(req.Prompt, req.MaxTokens, req.IgnoreEOS, e.spec.Seed)
	arrival := s.clk.Now()
	if st := stampOf(ctx, s.clk); st != nil {
		arrival = st.Arrival
	} else if !req.Arrival.IsZero() && !req.Arrival.After(arrival) && arrival.Sub(req.Arrival) < maxArrivalAge {
		arrival = req.Arrival
	}
	in := genai.CountTokens(req.Prompt)
	seq := &llmSeq{input: in, output: n, arrival: arrival, out: make(chan llmToken, n)}
	if err := e.llm.submit(seq); err != nil {
		return nil, err
	}
	return &llmStream{e: e.llm, s: seq, stop: stop, fault: l.Fault, inputTokens: in}, nil
}

// errDecoupled answers ModelInfer on an LLM model, as Triton answers it
// for a decoupled model.
var errDecoupled = errors.New("is decoupled: use ModelStreamInfer, the generate extension or the OpenAI API")

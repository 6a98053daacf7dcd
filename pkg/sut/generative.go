package sut

// This file is the SUT of a generative run: each sample of a query becomes
// one genai.Request on a genai.Client (whatever its protocol), and its
// answer is timed token by token: when the first token-bearing response
// arrived, every gap between responses, how many tokens came. The engine
// gets them in the sample's Completion and measures TTFT, TPOT and ITL
// from its scheduled time.

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// Prompts is a generative run's prompt set, by QSL index.
type Prompts interface {
	Prompt(i int) *genai.Prompt
}

// GenerativeOptions are what a Generative sends.
type GenerativeOptions struct {
	Model, Version string
	// Stream asks for the answer token by token; false, one answer (TTFT
	// is then the whole answer's time).
	Stream bool
	// Name is the SUT's name for the result; "" is "Network SUT (generative)".
	Name string
	// Timeout bounds one request, its whole answer; 0: none.
	Timeout time.Duration
	// Capture keeps each answer's content for the accuracy log
	// (Completion.Data, FirstTokenData): its output token ids as int32
	// little-endian when the server gives them, else its text's bytes.
	Capture bool
	// Seed is the seed of the prompts synthesised for a trace file's
	// requests (loadgen.Query.Request; genai.TracePrompt): the run's data
	// seed.
	Seed uint64
}

// Generative is the engine's SUT over a genai.Client: one request per
// sample, any scenario (Offline's one query, too, goes out a request per
// sample at once: a generative server batches continuously itself).
type Generative struct {
	client  genai.Client
	prompts Prompts
	opts    GenerativeOptions
	// traced writes the prompts of a trace file's requests, keeping the
	// blocks they share.
	traced  *genai.TraceTexts
	samples sync.Pool // *genSample
	// streaming counts the samples in flight that have had a token but
	// not their end (loadgen.StreamingSUT).
	streaming atomic.Int64
}

// Streaming is the number of samples in flight that have received tokens
// but not the end of their answer: at the drain timeout, answers still
// streaming.
func (g *Generative) Streaming() int { return int(g.streaming.Load()) }

var _ loadgen.StreamingSUT = (*Generative)(nil)

var _ preparedSUT = (*Generative)(nil)

// NewGenerative builds the SUT; it does not close client.
func NewGenerative(client genai.Client, prompts Prompts, opts GenerativeOptions) *Generative {
	if opts.Name == "" {
		opts.Name = "Network SUT (generative)"
	}
	return &Generative{client: client, prompts: prompts, opts: opts, traced: genai.NewTraceTexts(opts.Seed)}
}

// Name is the SUT's name for the result.
func (g *Generative) Name() string { return g.opts.Name }

// Generative says its completions carry tokens: the engine sizes its
// per-sample token record before the clock starts (loadgen.GenerativeSUT).
func (g *Generative) Generative() bool { return true }

var _ loadgen.GenerativeSUT = (*Generative)(nil)

// Prepare does nothing: a prompt is sent as it is.
func (g *Generative) Prepare(context.Context, *trace.Trace) error { return nil }

// IssueQuery sends each of q's samples as one request; done hears each
// sample on its own, its tokens and times in the Completion.
func (g *Generative) IssueQuery(ctx context.Context, q loadgen.Query, done func(loadgen.Completion)) {
	for j, idx := range q.Samples {
		s, _ := g.samples.Get().(*genSample)
		if s == nil {
			s = &genSample{pool: &g.samples, streaming: &g.streaming}
		}
		p := g.prompt(q, j, s)
		s.query, s.index, s.done, s.input = q.ID, j, done, 0
		if p == nil {
			// A prompt set shorter than its QSL: a bug of the caller, named
			// rather than a panic on the issuer's goroutine.
			s.End(time.Time{}, genai.Usage{}, fmt.Errorf("sut: no prompt for QSL index %d", idx))
			continue
		}
		s.input = p.InputTokens
		s.req = genai.Request{Model: g.opts.Model, Version: g.opts.Version, Prompt: p, Stream: g.opts.Stream, ID: uint64(q.Sample(j)),
			Capture: g.opts.Capture}
		rctx := ctx
		if g.opts.Timeout > 0 {
			rctx, s.cancel = context.WithTimeout(ctx, g.opts.Timeout)
		}
		g.client.Generate(rctx, &s.req, s)
	}
}

// prompt is q's sample j's prompt: the QSL sample's, or, for a query a
// trace file describes (q.Request), one synthesised at its lengths and
// blocks (genai.TracePrompt, by the sample's sequence number), held by s
// until its answer ends.
func (g *Generative) prompt(q loadgen.Query, j int, s *genSample) *genai.Prompt {
	r := q.Request
	if r == nil {
		return g.prompts.Prompt(q.Samples[j])
	}
	s.own = g.traced.Prompt(uint64(q.Sample(j)), r.InputTokens, r.OutputTokens, r.HashIDs)
	return &s.own
}

// genSample times one sample's answer: it is the request's handler, pooled
// with its gaps' slice, and back in the pool once the engine has its
// completion (done copies what it keeps).
type genSample struct {
	pool      *sync.Pool
	streaming *atomic.Int64 // the SUT's count of samples streaming
	req       genai.Request
	own       genai.Prompt // a trace request's prompt (Generative.prompt)
	query     int
	index     int // into the query's samples
	done      func(loadgen.Completion)
	cancel    context.CancelFunc // the request's timeout; nil without one
	input     int
	first     time.Time // the first token-bearing response; zero: none yet
	last      time.Time
	tokens    int // counted one per response unit the client reported
	resps     int // token-bearing responses
	gaps      []time.Duration
	// The answer's content, when captured: its ids (int32 LE) and text so
	// far, and the first token-bearing response's. Fresh for each
	// sample: the engine keeps them.
	ids, text, firstData []byte
	firstSeen            bool
}

// Content keeps a token-bearing response's content (a request that
// captures it): genai.ContentHandler.
func (s *genSample) Content(text []byte, ids []int64) {
	var own []byte
	for _, id := range ids {
		own = binary.LittleEndian.AppendUint32(own, uint32(int32(id)))
	}
	if !s.firstSeen {
		s.firstSeen, s.firstData = true, own
		if len(ids) == 0 {
			s.firstData = append([]byte(nil), text...)
		}
	}
	s.ids = append(s.ids, own...)
	s.text = append(s.text, text...)
}

// content is the answer as the accuracy log holds it: its output ids
// when the server gave any, else its text.
func (s *genSample) content() []byte {
	if len(s.ids) > 0 {
		return s.ids
	}
	if s.text == nil {
		return []byte{}
	}
	return s.text
}

// Tokens records a token-bearing response: its arrival, the gap since the
// previous one, and the tokens it holds.
func (s *genSample) Tokens(at time.Time, n int) {
	if s.first.IsZero() {
		s.first = at
		s.streaming.Add(1)
	} else {
		s.gaps = append(s.gaps, at.Sub(s.last))
	}
	s.last = at
	s.tokens += n
	s.resps++
}

// End hands the sample to the engine, with the server's output token count
// when it gave one and it is believable (genai.BelievedTokens: else the
// token-bearing responses, the claim passed on for the result's warning),
// and returns the handler to the pool. Input tokens stay the prompt's
// pseudo-tokens, whatever the server counted: a run's input lengths are
// the project's unit, the same on every server.
func (s *genSample) End(at time.Time, u genai.Usage, err error) {
	c := loadgen.Completion{Query: s.query, First: s.index, Count: 1, Err: err, At: at,
		FirstToken: s.first, Tokens: s.tokens, InputTokens: s.input, Gaps: s.gaps}
	if !s.first.IsZero() {
		s.streaming.Add(-1)
	}
	if u.OutputTokens > 0 {
		maxTokens := 0
		if s.req.Prompt != nil {
			maxTokens = s.req.Prompt.MaxTokens
		}
		if n, ok := genai.BelievedTokens(u.OutputTokens, s.resps, maxTokens); ok {
			c.Tokens, c.TokensFromServer = n, true
		} else {
			c.Tokens, c.TokensClaimed = n, u.OutputTokens
		}
	}
	if s.req.Capture && err == nil {
		c.Data, c.FirstTokenData = [][]byte{s.content()}, s.firstData
	}
	if s.cancel != nil {
		s.cancel()
	}
	done := s.done
	done(c)
	*s = genSample{pool: s.pool, streaming: s.streaming, gaps: s.gaps[:0]}
	s.pool.Put(s)
}

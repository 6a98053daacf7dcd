package sim

import (
	"cmp"
	"slices"
	"time"
)

// llmSeq is one request's passage through an LLM model.
type llmSeq struct {
	input, output int
	arrival       time.Time
	started       time.Time // its first step's start
	emitted       int       // tokens produced so far
	prefill       bool      // in its first step
	cancelled     bool      // its caller left: dropped before the next step
	// out carries the tokens to the front end (nil in LLMTruth); its
	// capacity is output, so a step never blocks on a slow reader. It is
	// closed after the last token, or with err set on failure.
	out chan llmToken
	err error
	// at collects the tokens' times in LLMTruth.
	at []time.Time
}

// llmToken is one produced token: its index and the step's nominal end.
type llmToken struct {
	index int
	at    time.Time
}

// llmBatch is the law of LLMSpec as a state machine, free of clocks: the
// real engine drives it on timers, LLMTruth on virtual time, so that both
// are the same law.
type llmBatch struct {
	spec    *LLMSpec
	queue   []*llmSeq // FIFO; queue[0] is the oldest
	running []*llmSeq
}

// begin admits queued sequences while the batch has room and returns the
// duration of the step that starts now; false when there is nothing to run.
func (b *llmBatch) begin() (time.Duration, bool) {
	kept := b.running[:0]
	for _, s := range b.running {
		if !s.cancelled {
			kept = append(kept, s)
		}
	}
	clear(b.running[len(kept):])
	b.running = kept
	for len(b.queue) > 0 && len(b.running) < b.spec.MaxSeqs {
		s := b.queue[0]
		b.queue[0] = nil
		b.queue = b.queue[1:]
		if s.cancelled {
			continue
		}
		s.prefill = true
		b.running = append(b.running, s)
	}
	if len(b.running) == 0 {
		return 0, false
	}
	d := b.spec.StepBase.D() + time.Duration(len(b.running))*b.spec.StepPerSeq.D()
	for _, s := range b.running {
		if s.prefill {
			d += time.Duration(s.input) * b.spec.PrefillPerToken.D()
		}
	}
	return d, true
}

// end ends the step at at: every sequence in it gets its next token
// (emit), and those complete leave the batch.
func (b *llmBatch) end(at time.Time, emit func(s *llmSeq, t llmToken)) {
	kept := b.running[:0]
	for _, s := range b.running {
		s.prefill = false
		if s.cancelled {
			continue
		}
		emit(s, llmToken{index: s.emitted, at: at})
		s.emitted++
		if s.emitted < s.output {
			kept = append(kept, s)
		}
	}
	clear(b.running[len(kept):])
	b.running = kept
}

// remove takes a cancelled sequence out of the queue at once, so that a
// queue of abandoned requests does not grow without bound.
func (b *llmBatch) remove(s *llmSeq) {
	for i, q := range b.queue {
		if q == s {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			return
		}
	}
}

// LLMRequest is one request to LLMTruth: when it arrives (from any origin)
// and its lengths in tokens.
type LLMRequest struct {
	At            time.Duration
	Input, Output int
}

// LLMTiming is what LLMTruth computes for one request: when each of its
// tokens is produced (same origin as the arrivals).
type LLMTiming struct {
	Tokens []time.Duration
}

// TTFT is the first token's time after the request's arrival.
func (t LLMTiming) TTFT(r LLMRequest) time.Duration { return t.Tokens[0] - r.At }

// TPOT is (E2E − TTFT)/(n − 1), LoadGen's time per output token; 0 for
// fewer than two tokens.
func (t LLMTiming) TPOT() time.Duration {
	n := len(t.Tokens)
	if n < 2 {
		return 0
	}
	return (t.Tokens[n-1] - t.Tokens[0]) / time.Duration(n-1)
}

// LLMTruth runs the law of spec (its defaults applied) over the requests
// in virtual time, a discrete-event calculation: the times a perfect
// server, free of timer lateness and network, would give each token. reqs
// may come in any order; the answer is in reqs' order. A request's Output
// must be at least 1.
func LLMTruth(spec LLMSpec, reqs []LLMRequest) ([]LLMTiming, error) {
	l, field, err := spec.normalized()
	if err != nil {
		return nil, fieldError(join("llm", field), "%v", err)
	}
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	// Ties in arrival keep the requests' order, as a FIFO queue would.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(reqs[a].At, reqs[b].At) })
	var origin time.Time // virtual time: time.Time arithmetic from its zero
	seqs := make([]*llmSeq, len(reqs))
	for i, r := range reqs {
		if r.Output < 1 {
			return nil, fieldError("output", "request %d: %d tokens: want at least 1", i, r.Output)
		}
		seqs[i] = &llmSeq{input: r.Input, output: r.Output, arrival: origin.Add(r.At)}
	}
	b := llmBatch{spec: &l}
	next := 0 // in order: the next request to arrive
	now := origin
	record := func(s *llmSeq, t llmToken) { s.at = append(s.at, t.at) }
	for next < len(order) || len(b.running) > 0 || len(b.queue) > 0 {
		if len(b.running) == 0 && len(b.queue) == 0 && seqs[order[next]].arrival.After(now) {
			now = seqs[order[next]].arrival // idle: the next arrival starts a step
		}
		for next < len(order) && !seqs[order[next]].arrival.After(now) {
			b.queue = append(b.queue, seqs[order[next]])
			next++
		}
		d, _ := b.begin()
		now = now.Add(d)
		b.end(now, record)
	}
	out := make([]LLMTiming, len(reqs))
	for i, s := range seqs {
		out[i].Tokens = make([]time.Duration, len(s.at))
		for k, at := range s.at {
			out[i].Tokens[k] = at.Sub(origin)
		}
	}
	return out, nil
}

// LLMCapacity is the most requests per second spec (its defaults applied)
// serves of requests of input and output tokens each: with the batch
// always full, a step holds MaxSeqs sequences and, on average,
// MaxSeqs/output of them prefill, so
//
//	capacity = (MaxSeqs/output) / (StepBase + MaxSeqs×StepPerSeq + (MaxSeqs/output)×input×PrefillPerToken)
//
// Beyond it the queue grows without bound.
func LLMCapacity(spec LLMSpec, input, output int) (float64, error) {
	l, field, err := spec.normalized()
	if err != nil {
		return 0, fieldError(join("llm", field), "%v", err)
	}
	if output < 1 || input < 0 {
		return 0, fieldError("output", "input %d, output %d: want input >= 0 and output >= 1", input, output)
	}
	perStep := float64(l.MaxSeqs) / float64(output)
	step := l.StepBase.D().Seconds() + float64(l.MaxSeqs)*l.StepPerSeq.D().Seconds() + perStep*float64(input)*l.PrefillPerToken.D().Seconds()
	return perStep / step, nil
}

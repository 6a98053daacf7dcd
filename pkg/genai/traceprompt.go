package genai

import (
	"math/rand/v2"
	"strings"
	"sync"
)

// TraceBlockTokens is the length of the prompt block a trace's hash id
// names (Mooncake's traces: 512 tokens a block).
const TraceBlockTokens = 512

// The streams of a trace request's words: a hash id's block, and a
// request's own text (past its blocks, or the whole prompt without any).
const (
	streamBlock uint64 = 0x626c6f636b // "block"
	streamTrace uint64 = 0x7472616365 // "trace"
)

// TracePrompt is the prompt of a request a trace file describes (issue
// 31): tokens pseudo-tokens and maxTokens asked. With hash ids, block j
// (TraceBlockTokens words) is hash id hashIDs[j]'s text, the same in every
// request for the same seed and id, so a server's prefix cache sees the
// trace's reuse; the last block is cut to fit (a prefix of the block's
// text), ids past the length are not used, and a length past the blocks
// is filled with the request's own text. Without hash ids the prompt is
// the request's own text: index (the query's) picks it, different
// indices differing from their first word. CountTokens of Text is tokens.
func TracePrompt(seed, index uint64, tokens, maxTokens int, hashIDs []int) Prompt {
	return Prompt{Text: TraceText(seed, index, tokens, hashIDs), InputTokens: max(tokens, 0), MaxTokens: maxTokens}
}

// TraceText is TracePrompt's text, written in one allocation.
func TraceText(seed, index uint64, tokens int, hashIDs []int) string {
	return traceText(seed, index, tokens, hashIDs, nil)
}

// traceText writes the text, taking whole blocks from cache when not nil.
func traceText(seed, index uint64, tokens int, hashIDs []int, cache *TraceTexts) string {
	if tokens <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(tokens * 6)
	left := tokens
	for _, id := range hashIDs {
		if left == 0 {
			break
		}
		n := min(left, TraceBlockTokens)
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if n == TraceBlockTokens && cache != nil {
			b.WriteString(cache.block(id))
		} else {
			appendWords(&b, rand.NewPCG(seed^streamBlock, uint64(id)), n)
		}
		left -= n
	}
	if left > 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		appendWords(&b, rand.NewPCG(seed^streamTrace, index), left)
	}
	return b.String()
}

// traceCacheSlots is how many whole blocks a TraceTexts keeps: about
// 2.5 KB each, so at most a few MB, whatever the trace's length.
const traceCacheSlots = 1024

// TraceTexts writes trace requests' prompts as TracePrompt does, keeping
// the text of recently used whole blocks (a bounded, direct-mapped cache
// by hash id): a block shared by many requests, as a trace's prefixes
// are, is copied rather than drawn again on the issuer's goroutine. Safe
// for concurrent use.
type TraceTexts struct {
	seed  uint64
	mu    sync.Mutex
	slots [traceCacheSlots]struct {
		id   int
		text string
	}
}

// NewTraceTexts writes prompts for seed (the run's data seed).
func NewTraceTexts(seed uint64) *TraceTexts { return &TraceTexts{seed: seed} }

// Prompt is TracePrompt(seed, index, tokens, maxTokens, hashIDs).
func (c *TraceTexts) Prompt(index uint64, tokens, maxTokens int, hashIDs []int) Prompt {
	return Prompt{Text: traceText(c.seed, index, tokens, hashIDs, c), InputTokens: max(tokens, 0), MaxTokens: maxTokens}
}

// block is hash id id's whole block.
func (c *TraceTexts) block(id int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.slots[uint(id)%traceCacheSlots]
	if s.text == "" || s.id != id {
		var b strings.Builder
		b.Grow(TraceBlockTokens * 6)
		appendWords(&b, rand.NewPCG(c.seed^streamBlock, uint64(id)), TraceBlockTokens)
		s.id, s.text = id, b.String()
	}
	return s.text
}

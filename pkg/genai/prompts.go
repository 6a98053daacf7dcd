package genai

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The lengths of a synthetic prompt set when a spec gives none: vLLM's
// `bench serve` random data set's (1024 in, 128 out).
var (
	DefaultInputTokens  = Fixed(1024)
	DefaultOutputTokens = Fixed(128)
)

// SharedPrefix is `--shared-prefix COUNT:TOKENS` (the spec's
// shared_prefix): Count synthetic system prompts of Tokens pseudo-tokens
// each, sample i's prompt starting with prefix i mod Count, so a server
// that caches prefixes computes each once. The zero SharedPrefix is none.
type SharedPrefix struct {
	Count, Tokens int
}

// MaxPrefixes bounds a SharedPrefix's Count.
const MaxPrefixes = 1 << 16

// ErrSharedPrefix is a malformed --shared-prefix.
var ErrSharedPrefix = errors.New("shared prefix")

// ParseSharedPrefix reads "COUNT:TOKENS" (1 ≤ COUNT ≤ MaxPrefixes,
// 1 ≤ TOKENS ≤ MaxPromptTokens). Errors wrap ErrSharedPrefix.
func ParseSharedPrefix(v string) (SharedPrefix, error) {
	c, t, ok := strings.Cut(strings.TrimSpace(v), ":")
	count, err1 := strconv.Atoi(c)
	tokens, err2 := strconv.Atoi(t)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return SharedPrefix{}, fmt.Errorf("%w: %s: want COUNT:TOKENS (how many shared system prompts, and their length in tokens), e.g. 4:512", ErrSharedPrefix, quote(v))
	case count < 1 || count > MaxPrefixes:
		return SharedPrefix{}, fmt.Errorf("%w: COUNT %d is not between 1 and %d", ErrSharedPrefix, count, MaxPrefixes)
	case tokens < 1 || tokens > MaxPromptTokens:
		return SharedPrefix{}, fmt.Errorf("%w: TOKENS %d is not between 1 and %d", ErrSharedPrefix, tokens, MaxPromptTokens)
	}
	return SharedPrefix{Count: count, Tokens: tokens}, nil
}

// String is the SharedPrefix in ParseSharedPrefix's syntax ("" for none).
func (p SharedPrefix) String() string {
	if p.Count == 0 {
		return ""
	}
	return strconv.Itoa(p.Count) + ":" + strconv.Itoa(p.Tokens)
}

// Prompts is a run's prompt set and its query sample library (it has
// loadgen.QSL's methods): sample i of the run is Prompt(i). A synthetic
// set holds only lengths until Load writes the loaded samples' text (a
// large set of long prompts would not fit in memory whole); a data set
// holds its text from the start.
type Prompts struct {
	list   []Prompt
	perf   int
	source string
	// synthetic sets only: the seed and prefix the texts are made from,
	// and the indices whose text Load wrote.
	synthetic bool
	seed      uint64
	prefix    SharedPrefix
	loaded    []int
}

// SyntheticOptions configure NewSynthetic.
type SyntheticOptions struct {
	// Total is the number of prompts; Performance the QSL's performance
	// sample count (≤ 0 or over Total: Total).
	Total, Performance int
	// Input and Output are the laws of each prompt's own length and of its
	// requested output length; unset: DefaultInputTokens and
	// DefaultOutputTokens.
	Input, Output Dist
	// Prefix puts a shared system prompt before each prompt's own text
	// (its tokens are added to the Input draw).
	Prefix SharedPrefix
	// Seed draws the lengths (input from PCG(Seed, 1), output from
	// PCG(Seed, 2), sample i taking each one's i-th draw) and the words.
	Seed uint64
}

// NewSynthetic draws a synthetic prompt set's lengths. Sample i's text,
// written by Load, is prefix (i mod Prefix.Count) then Input's draw of
// words, single-spaced: its InputTokens is Prefix.Tokens + the draw, and
// CountTokens of its text agrees. The same options give the same set, and
// a smaller Total gives a prefix of a larger one's samples.
func NewSynthetic(o SyntheticOptions) (*Prompts, error) {
	if o.Total < 1 {
		return nil, fmt.Errorf("genai: a synthetic prompt set needs at least one prompt, got %d", o.Total)
	}
	if o.Prefix.Count < 0 || o.Prefix.Count > MaxPrefixes || o.Prefix.Tokens < 0 || o.Prefix.Tokens > MaxPromptTokens || (o.Prefix.Count == 0) != (o.Prefix.Tokens == 0) {
		return nil, fmt.Errorf("%w: %+v is out of range", ErrSharedPrefix, o.Prefix)
	}
	if o.Input.IsZero() {
		o.Input = DefaultInputTokens
	}
	if o.Output.IsZero() {
		o.Output = DefaultOutputTokens
	}
	p := &Prompts{list: make([]Prompt, o.Total), source: "synthetic", synthetic: true, seed: o.Seed, prefix: o.Prefix}
	p.perf = perfCount(o.Performance, o.Total)
	in, out := rand.NewPCG(o.Seed, 1), rand.NewPCG(o.Seed, 2)
	for i := range p.list {
		p.list[i].InputTokens = o.Prefix.Tokens + o.Input.Draw(in)
		p.list[i].MaxTokens = o.Output.Draw(out)
	}
	return p, nil
}

// Synthetic is NewSynthetic's whole set, every text written: for tests
// and small sets.
func Synthetic(n int, input, output Dist, prefix SharedPrefix, seed uint64) ([]Prompt, error) {
	p, err := NewSynthetic(SyntheticOptions{Total: n, Input: input, Output: output, Prefix: prefix, Seed: seed})
	if err != nil {
		return nil, err
	}
	for i := range p.list {
		p.write(i, nil)
	}
	return p.list, nil
}

// FromPrompts makes a prompt set of a data set's prompts (LoadJSONL's),
// named source in messages. A prompt without MaxTokens gets output's draw
// (unset: DefaultOutputTokens) from PCG(seed, 2), prompt i taking its
// i-th draw. ps is kept, not copied.
func FromPrompts(source string, ps []Prompt, performance int, output Dist, seed uint64) (*Prompts, error) {
	if len(ps) == 0 {
		return nil, fmt.Errorf("genai: %s: no prompts", source)
	}
	if output.IsZero() {
		output = DefaultOutputTokens
	}
	g := rand.NewPCG(seed, 2)
	for i := range ps {
		if n := output.Draw(g); ps[i].MaxTokens <= 0 {
			ps[i].MaxTokens = n
		}
	}
	return &Prompts{list: ps, perf: perfCount(performance, len(ps)), source: source}, nil
}

func perfCount(perf, total int) int {
	if perf <= 0 || perf > total {
		return total
	}
	return perf
}

// Source is where the prompts come from: "synthetic" or the data set's
// name.
func (p *Prompts) Source() string { return p.source }

// Synthetic says the prompts are made, not read.
func (p *Prompts) Synthetic() bool { return p.synthetic }

// Prefix is the synthetic set's shared prefix (none for a data set).
func (p *Prompts) Prefix() SharedPrefix { return p.prefix }

// TotalSampleCount is the number of prompts.
func (p *Prompts) TotalSampleCount() int { return len(p.list) }

// PerformanceSampleCount is the size of the set LoadGen loads at once.
func (p *Prompts) PerformanceSampleCount() int { return p.perf }

// Prompt is sample i (a QSL index). A synthetic sample's Text is written
// only while it is loaded (Load); its lengths are always there. Not safe
// to call during Load.
func (p *Prompts) Prompt(i int) *Prompt { return &p.list[i] }

// Load makes the given QSL indices ready before the clock starts: for a
// synthetic set it writes their text and drops the text of samples loaded
// before and not now (LoadGen loads one performance set at a time). A data
// set's text is always there.
func (p *Prompts) Load(ctx context.Context, indices []int) error {
	for _, i := range indices {
		if i < 0 || i >= len(p.list) {
			return fmt.Errorf("genai: load: sample %d is not in the set of %d prompts", i, len(p.list))
		}
	}
	if !p.synthetic {
		return nil
	}
	for _, i := range p.loaded {
		p.list[i].Text = ""
	}
	p.loaded = append(p.loaded[:0], indices...)
	prefixes := map[int]string{} // one string per prefix, shared by its samples
	for n, i := range indices {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("genai: load: %w", err)
			}
		}
		p.write(i, prefixes)
	}
	return nil
}

// write makes sample i's text; prefixes, when not nil, keeps each prefix's
// text for the next sample that starts with it.
func (p *Prompts) write(i int, prefixes map[int]string) {
	pr := &p.list[i]
	if p.prefix.Count == 0 {
		pr.Text = syntheticText(p.seed, streamSample, uint64(i), pr.InputTokens)
		return
	}
	k := i % p.prefix.Count
	head, ok := prefixes[k]
	if !ok {
		head = syntheticText(p.seed, streamPrefix, uint64(k), p.prefix.Tokens)
		if prefixes != nil {
			prefixes[k] = head
		}
	}
	pr.Text = head + " " + syntheticText(p.seed, streamSample, uint64(i), pr.InputTokens-p.prefix.Tokens)
}

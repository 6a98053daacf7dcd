package sim

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/netloadgen/netloadgen/kserve"
)

// Generative is the Function of an LLM model (ModelSpec.LLM set): it answers
// text token by token and is served over Triton's decoupled ModelStreamInfer,
// Triton's HTTP generate extension and the OpenAI-compatible API.
const Generative Function = "generate"

// LLMSpec is the law of a simulated LLM served with continuous batching
// (iteration-level scheduling, as vLLM and TensorRT-LLM do). The model runs
// one step after another while it has sequences; each step gives every
// sequence in it one token, at the step's end. Before a step, queued
// requests join the batch, oldest first, while it holds fewer than MaxSeqs;
// a request's first step also prefills its prompt. A step of b sequences,
// p of whose prompt tokens are prefilled in it, takes
//
//	StepBase + b × StepPerSeq + p × PrefillPerToken
//
// A request arriving while the model is idle starts a step at once; one
// arriving during a step waits for the step's end. docs/sutproxy-models.md
// derives TTFT, TPOT and capacity from it; LLMTruth computes them for any
// arrivals.
type LLMSpec struct {
	// MaxSeqs is how many sequences decode at once; the rest queue (FIFO).
	// Default 256.
	MaxSeqs int `json:"max_seqs,omitempty"`
	// StepBase is a step's fixed cost; default 5ms.
	StepBase Duration `json:"step_base,omitempty"`
	// StepPerSeq is added per sequence in the step; default 20us.
	StepPerSeq Duration `json:"step_per_seq,omitempty"`
	// PrefillPerToken is added per prompt token prefilled in the step;
	// default 10us.
	PrefillPerToken Duration `json:"prefill_per_token,omitempty"`
	// DefaultMaxTokens is the output length of a request that asks none;
	// default 16 (OpenAI's default for completions), or MaxTokensLimit if
	// lower.
	DefaultMaxTokens int `json:"default_max_tokens,omitempty"`
	// MaxTokensLimit refuses a request asking more (400); default 16384.
	MaxTokensLimit int `json:"max_tokens_limit,omitempty"`
	// EOSMin and EOSMax, when set, are the model's own law of output
	// length: a request without ignore_eos ends at a length drawn uniformly
	// from [EOSMin, EOSMax] (from the prompt's hash and Seed, so one prompt
	// always gets the same) if that comes before its max_tokens. Zero: the
	// model never stops early, every answer is max_tokens long.
	EOSMin int `json:"eos_min,omitempty"`
	EOSMax int `json:"eos_max,omitempty"`
	// Fault is a test-only malformed answer, given by every request of the
	// model after its first token: bad_framing, error_mid, no_final or
	// unknown_id; or no_stream_options, a 400 for an OpenAI request with
	// stream_options (kserve/server's Fault* constants). Empty: none.
	Fault string `json:"fault,omitempty"`
}

// The default LLM law (see LLMSpec's fields).
const (
	defaultMaxSeqs          = 256
	defaultStepBase         = 5 * time.Millisecond
	defaultStepPerSeq       = 20 * time.Microsecond
	defaultPrefillPerToken  = 10 * time.Microsecond
	defaultMaxTokens        = 16
	defaultMaxTokensLimit   = 1 << 14
	maxLLMSeqs              = 1 << 16
	maxLLMStepPart          = 10 * time.Second
	maxLLMTokensLimitBounds = 1 << 20
)

// LLM faults (kserve/server spells the same names).
var llmFaults = []string{"", "bad_framing", "error_mid", "no_final", "unknown_id", "no_stream_options"}

// DefaultLLM is the built-in LLM model `llm`: the defaults of LLMSpec.
func DefaultLLM() ModelSpec {
	return ModelSpec{Name: "llm", LLM: &LLMSpec{}}
}

// normalized applies the defaults or names the first bad field (under
// "llm.").
func (l LLMSpec) normalized() (LLMSpec, string, error) {
	if l.MaxSeqs == 0 {
		l.MaxSeqs = defaultMaxSeqs
	}
	if l.StepBase == 0 && l.StepPerSeq == 0 {
		l.StepBase, l.StepPerSeq = Duration(defaultStepBase), Duration(defaultStepPerSeq)
	}
	if l.PrefillPerToken == 0 {
		l.PrefillPerToken = Duration(defaultPrefillPerToken)
	}
	if l.MaxTokensLimit == 0 {
		l.MaxTokensLimit = defaultMaxTokensLimit
	}
	if l.DefaultMaxTokens == 0 {
		l.DefaultMaxTokens = min(defaultMaxTokens, max(l.MaxTokensLimit, 1))
	}
	switch {
	case l.MaxSeqs < 1 || l.MaxSeqs > maxLLMSeqs:
		return l, "max_seqs", fmt.Errorf("%d is not in [1, %d]", l.MaxSeqs, maxLLMSeqs)
	case l.StepBase < 0 || l.StepBase.D() > maxLLMStepPart:
		return l, "step_base", fmt.Errorf("%s is not in [0, %s]", l.StepBase, maxLLMStepPart)
	case l.StepPerSeq < 0 || l.StepPerSeq.D() > maxLLMStepPart:
		return l, "step_per_seq", fmt.Errorf("%s is not in [0, %s]", l.StepPerSeq, maxLLMStepPart)
	case l.PrefillPerToken < 0 || l.PrefillPerToken.D() > maxLLMStepPart:
		return l, "prefill_per_token", fmt.Errorf("%s is not in [0, %s]", l.PrefillPerToken, maxLLMStepPart)
	case l.MaxTokensLimit < 1 || l.MaxTokensLimit > maxLLMTokensLimitBounds:
		return l, "max_tokens_limit", fmt.Errorf("%d is not in [1, %d]", l.MaxTokensLimit, maxLLMTokensLimitBounds)
	case l.DefaultMaxTokens < 1 || l.DefaultMaxTokens > l.MaxTokensLimit:
		return l, "default_max_tokens", fmt.Errorf("%d is not in [1, max_tokens_limit %d]", l.DefaultMaxTokens, l.MaxTokensLimit)
	case l.EOSMin < 0 || l.EOSMax < l.EOSMin || (l.EOSMin == 0) != (l.EOSMax == 0):
		return l, "eos_min", fmt.Errorf("eos_min %d, eos_max %d: want 1 <= eos_min <= eos_max, or both 0 (no early stop)", l.EOSMin, l.EOSMax)
	}
	for _, f := range llmFaults {
		if l.Fault == f {
			return l, "", nil
		}
	}
	return l, "fault", fmt.Errorf("%q is not one of bad_framing, error_mid, no_final, unknown_id, no_stream_options", l.Fault)
}

// normalizedLLM completes an LLM model's spec: its tensors are Triton's LLM
// conventions (TensorRT-LLM's and vLLM's backends), it is one instance with
// no batch dimension (continuous batching is its own), and the tensor
// model's knobs do not apply.
func (s ModelSpec) normalizedLLM() (ModelSpec, error) {
	bad := func(field, format string, args ...any) (ModelSpec, error) {
		return ModelSpec{}, fmt.Errorf("sim: model %q: %s", s.Name, fieldError(field, format, args...))
	}
	switch {
	case s.MaxBatchSize != 0:
		return bad("max_batch_size", "an llm model batches on its own (llm.max_seqs): leave it out")
	case s.DynamicBatching != nil:
		return bad("dynamic_batching", "an llm model batches on its own (llm.max_seqs): leave it out")
	case s.Cache:
		return bad("cache", "not available for an llm model")
	case !s.Latency.IsZero():
		return bad("latency", "an llm model's time is its llm law (step_base, step_per_seq, prefill_per_token)")
	case s.Function != "" && s.Function != Generative:
		return bad("function", "an llm model's function is %q", Generative)
	case s.Instances > 1:
		return bad("instances", "an llm model is one instance (scale with llm.max_seqs)")
	}
	l, field, err := s.LLM.normalized()
	if err != nil {
		return bad(join("llm", field), "%v", err)
	}
	s.LLM, s.Function, s.Instances = &l, Generative, 1
	s.Inputs = []TensorSpec{
		{Name: "text_input", Datatype: kserve.Bytes, Shape: []int64{1}},
		{Name: "max_tokens", Datatype: kserve.Int32, Shape: []int64{1}},
		{Name: "stream", Datatype: kserve.Bool, Shape: []int64{1}},
		{Name: "ignore_eos", Datatype: kserve.Bool, Shape: []int64{1}},
	}
	s.Outputs = []TensorSpec{
		{Name: "text_output", Datatype: kserve.Bytes, Shape: []int64{-1}},
		{Name: "output_ids", Datatype: kserve.Int32, Shape: []int64{-1}},
	}
	return s, nil
}

// outputLen is how many tokens the model answers: maxTokens (0: the
// default), or earlier at its own end of sequence unless ignoreEOS. The
// second result says whether the end was the model's own ("stop") rather
// than the length asked ("length").
func (l *LLMSpec) outputLen(prompt string, maxTokens int, ignoreEOS bool, seed uint64) (int, bool) {
	if maxTokens <= 0 {
		maxTokens = l.DefaultMaxTokens
	}
	if ignoreEOS || l.EOSMax == 0 {
		return maxTokens, false
	}
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(prompt))
	n := l.EOSMin + int(h.Sum64()%uint64(l.EOSMax-l.EOSMin+1))
	if n < maxTokens {
		return n, true
	}
	return maxTokens, false
}

// tokenWords are the simulated answer's words: token i is word i mod len,
// so an answer of n tokens counts n pseudo-tokens.
var tokenWords = [...]string{"the", "model", "answers", "one", "word", "per", "token", "as", "it", "decodes"}

// TokenText is token i's text in an answer: a word, with a leading space
// after the first, so that the answer's text has as many words as tokens.
func TokenText(i int) string {
	w := tokenWords[i%len(tokenWords)]
	if i == 0 {
		return w
	}
	return " " + w
}

// TokenID is token i's id (output_ids): deterministic, within a 32000-word
// vocabulary.
func TokenID(i int) int32 { return int32((i*7919 + 13) % 32000) }

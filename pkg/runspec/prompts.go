package runspec

import (
	"path/filepath"
	"strings"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// isPromptData says a data path is a generative model's prompt data set
// (JSON Lines), not sample tensors.
func isPromptData(path string) bool { return strings.EqualFold(filepath.Ext(path), ".jsonl") }

// buildPrompts is the spec's prompt set: a .jsonl data set's (data, already
// resolved), synthetic when input_tokens, output_tokens or shared_prefix
// is given, else nil (a generative model found by the probe takes
// genai.NewSynthetic's defaults). total and perf are the spec's sample
// counts, defaults applied.
func buildPrompts(s api.RunSpec, data string, total, perf int) (*genai.Prompts, error) {
	var in, out genai.Dist
	var prefix genai.SharedPrefix
	var err error
	if s.InputTokens != "" {
		if in, err = genai.ParseDist(s.InputTokens); err != nil {
			return nil, fieldErr("input_tokens", "%v", err)
		}
	}
	if s.OutputTokens != "" {
		if out, err = genai.ParseDist(s.OutputTokens); err != nil {
			return nil, fieldErr("output_tokens", "%v", err)
		}
	}
	if s.SharedPrefix != "" {
		if prefix, err = genai.ParseSharedPrefix(s.SharedPrefix); err != nil {
			return nil, fieldErr("shared_prefix", "%v", err)
		}
	}
	if data != "" && isPromptData(data) {
		return dataPrompts(s, data, out, perf)
	}
	if s.InputTokens == "" && s.OutputTokens == "" && s.SharedPrefix == "" {
		return nil, nil
	}
	if data != "" {
		return nil, fieldErr("data", "holds sample tensors, and input_tokens, output_tokens or shared_prefix ask for synthetic prompts: give a .jsonl prompt data set, or leave data out")
	}
	p, err := genai.NewSynthetic(genai.SyntheticOptions{Total: total, Performance: perf, Input: in, Output: out, Prefix: prefix, Seed: s.DataSeed})
	if err != nil {
		return nil, fieldErr("total_samples", "%v", err)
	}
	return p, nil
}

// dataPrompts reads a .jsonl data set; output draws the lengths of the
// prompts that give none.
func dataPrompts(s api.RunSpec, data string, out genai.Dist, perf int) (*genai.Prompts, error) {
	if s.InputTokens != "" {
		return nil, fieldErr("input_tokens", "a .jsonl data set's prompts have their own lengths: leave input_tokens out (or data, for synthetic prompts)")
	}
	if s.SharedPrefix != "" {
		return nil, fieldErr("shared_prefix", "applies to synthetic prompts only, not to a .jsonl data set: leave shared_prefix out (or data)")
	}
	ps, err := genai.LoadJSONL(data)
	if err != nil {
		return nil, fieldErr("data", "%v", err)
	}
	if s.PerformanceSamples == 0 {
		perf = len(ps) // the data set's size, as sample files give theirs
	}
	p, err := genai.FromPrompts(s.Data, ps, perf, out, s.DataSeed)
	if err != nil {
		return nil, fieldErr("data", "%v", err)
	}
	return p, nil
}

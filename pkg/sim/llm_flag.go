package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LLMFlagSyntax summarises the `--model` syntax of an LLM model (kind=llm).
const LLMFlagSyntax = `name=NAME,kind=llm[,max_seqs=256][,step=5ms][,per_seq=20us][,prefill=10us]` +
	`[,max_tokens=16][,max_tokens_limit=16384][,eos=N|LO:HI][,fault=bad_framing|error_mid|no_final|unknown_id|no_stream_options]` +
	`[,versions=1:2][,platform=P][,seed=N]`

// isLLMFlag says whether a --model value asks for an LLM model.
func isLLMFlag(s string) bool {
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "kind=llm" {
			return true
		}
	}
	return false
}

// parseLLMFlag parses an LLM model's --model value (LLMFlagSyntax):
// step is LLMSpec.StepBase, per_seq StepPerSeq, prefill PrefillPerToken,
// max_tokens DefaultMaxTokens, eos the model's own output law (EOSMin and
// EOSMax; N for both).
func parseLLMFlag(s string) (ModelSpec, error) {
	spec := ModelSpec{LLM: &LLMSpec{}}
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || key == "" {
			return ModelSpec{}, fmt.Errorf("sim: --model %q: %q is not key=value", s, kv)
		}
		if seen[key] {
			return ModelSpec{}, fmt.Errorf("sim: --model %q: key %q given twice", s, key)
		}
		seen[key] = true
		if err := setLLMFlagKey(&spec, key, val); err != nil {
			return ModelSpec{}, fmt.Errorf("sim: --model %q: key %q: %w", s, key, err)
		}
	}
	if spec.Name == "" {
		return ModelSpec{}, fmt.Errorf("sim: --model %q: key \"name\" is required", s)
	}
	if err := spec.Validate(); err != nil {
		return ModelSpec{}, fmt.Errorf("sim: --model %q: %w", s, err)
	}
	return spec, nil
}

func setLLMFlagKey(spec *ModelSpec, key, val string) error {
	l := spec.LLM
	var err error
	dur := func(dst *Duration) {
		var d time.Duration
		d, err = time.ParseDuration(val)
		if err == nil && d < 0 {
			err = fmt.Errorf("%q: want a duration >= 0", val)
		}
		*dst = Duration(d)
	}
	switch key {
	case "name":
		spec.Name = val
	case "kind":
	case "max_seqs":
		l.MaxSeqs, err = flagInt(val, 1)
	case "step":
		dur(&l.StepBase)
	case "per_seq":
		dur(&l.StepPerSeq)
	case "prefill":
		dur(&l.PrefillPerToken)
	case "max_tokens":
		l.DefaultMaxTokens, err = flagInt(val, 1)
	case "max_tokens_limit":
		l.MaxTokensLimit, err = flagInt(val, 1)
	case "eos":
		lo, hi, ok := strings.Cut(val, ":")
		if !ok {
			hi = lo
		}
		if l.EOSMin, err = flagInt(lo, 1); err == nil {
			l.EOSMax, err = flagInt(hi, l.EOSMin)
		}
	case "fault":
		l.Fault = val
	case "versions", "version":
		spec.Versions = strings.Split(val, ":")
	case "platform":
		spec.Platform = val
	case "seed":
		spec.Seed, err = strconv.ParseUint(val, 10, 64)
	default:
		return fmt.Errorf("unknown key for an llm model; the syntax is %s", LLMFlagSyntax)
	}
	return err
}

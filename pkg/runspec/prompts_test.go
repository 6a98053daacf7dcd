package runspec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

func genSpec() api.RunSpec {
	return api.RunSpec{Target: "http://h:1", Model: "llm", Scenario: "Server"}
}

func TestBuildSyntheticPrompts(t *testing.T) {
	s := genSpec()
	r, err := Build(s, Env{})
	if err != nil || r.Spec.Prompts != nil {
		t.Fatalf("a spec without token fields: prompts %v, %v; want none", r.Spec.Prompts, err)
	}
	s.InputTokens, s.OutputTokens, s.SharedPrefix = "uniform:10:20", "normal:50:5", "2:8"
	s.TotalSamples, s.PerformanceSamples, s.DataSeed = 30, 12, 5
	r, err = Build(s, Env{})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Spec.Prompts
	if p == nil || !p.Synthetic() || p.TotalSampleCount() != 30 || p.PerformanceSampleCount() != 12 || p.Prefix() != (genai.SharedPrefix{Count: 2, Tokens: 8}) {
		t.Fatalf("prompts %+v", p)
	}
	in, _ := genai.ParseDist("uniform:10:20")
	out, _ := genai.ParseDist("normal:50:5")
	want, _ := genai.Synthetic(30, in, out, genai.SharedPrefix{Count: 2, Tokens: 8}, 5)
	for i := range want {
		if got := p.Prompt(i); got.InputTokens != want[i].InputTokens || got.MaxTokens != want[i].MaxTokens {
			t.Fatalf("prompt %d: %d in, %d out; genai.Synthetic with the spec's laws and seed gives %d, %d",
				i, got.InputTokens, got.MaxTokens, want[i].InputTokens, want[i].MaxTokens)
		}
	}
	// One field alone asks for synthetic prompts, the others at their
	// defaults.
	s = genSpec()
	s.OutputTokens = "7"
	r, err = Build(s, Env{})
	if err != nil || r.Spec.Prompts == nil || r.Spec.Prompts.Prompt(0).MaxTokens != 7 || r.Spec.Prompts.Prompt(0).InputTokens != 1024 {
		t.Fatalf("output_tokens alone: %+v, %v", r.Spec.Prompts, err)
	}
}

func TestBuildPromptFieldErrors(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "p.jsonl")
	if err := os.WriteFile(jsonl, []byte(`{"prompt": "hi"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"prompt": "hi"}`+"\n"+`{"prompt": 3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tensors := filepath.Join(dir, "in.json")
	if err := os.WriteFile(tensors, []byte(`{"data": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		edit  func(*api.RunSpec)
		field string
		says  string
	}{
		{"bad input law", func(s *api.RunSpec) { s.InputTokens = "uniform:9:1" }, "input_tokens", "HI 1 is below LO 9"},
		{"bad output law", func(s *api.RunSpec) { s.OutputTokens = "gamma:1:2" }, "output_tokens", "want N, uniform:LO:HI"},
		{"bad prefix", func(s *api.RunSpec) { s.SharedPrefix = "4" }, "shared_prefix", "COUNT:TOKENS"},
		{"input law with a data set", func(s *api.RunSpec) { s.Data, s.InputTokens = jsonl, "5" }, "input_tokens", "own lengths"},
		{"prefix with a data set", func(s *api.RunSpec) { s.Data, s.SharedPrefix = jsonl, "1:5" }, "shared_prefix", "synthetic prompts only"},
		{"laws with sample tensors", func(s *api.RunSpec) { s.Data, s.OutputTokens = tensors, "5" }, "data", "holds sample tensors"},
		{"a bad line", func(s *api.RunSpec) { s.Data = bad }, "data", "bad.jsonl:2"},
	}
	for _, c := range cases {
		s := genSpec()
		c.edit(&s)
		_, err := Build(s, Env{AnyData: true})
		var fe *api.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Message, c.says) {
			t.Errorf("%s: %v; want a %s error saying %q", c.name, err, c.field, c.says)
		}
	}
}

func TestBuildJSONLPrompts(t *testing.T) {
	root := t.TempDir()
	body := `{"prompt": "one two three", "max_tokens": 4}` + "\n" + `{"messages": [{"role": "user", "content": "hi"}]}` + "\n" + `{"prompt": "x"}` + "\n"
	if err := os.WriteFile(filepath.Join(root, "set.jsonl"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	s := genSpec()
	s.Data, s.OutputTokens = "set.jsonl", "uniform:20:30"
	// The daemon: under its data root.
	r, err := Build(s, Env{DataRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Spec.Prompts
	if r.Spec.Data != "" || p == nil || p.Synthetic() || p.TotalSampleCount() != 3 || p.PerformanceSampleCount() != 3 || p.Source() != "set.jsonl" {
		t.Fatalf("data %q, prompts %+v", r.Spec.Data, p)
	}
	if p.Prompt(0).MaxTokens != 4 || p.Prompt(0).InputTokens != 3 || p.Prompt(1).Messages == nil {
		t.Errorf("prompt 0 %+v, prompt 1 %+v", *p.Prompt(0), *p.Prompt(1))
	}
	if m := p.Prompt(2).MaxTokens; m < 20 || m > 30 {
		t.Errorf("a prompt without max_tokens got %d, not output_tokens' uniform:20:30", m)
	}
	s.PerformanceSamples = 2
	if r, err := Build(s, Env{DataRoot: root}); err != nil || r.Spec.Prompts.PerformanceSampleCount() != 2 {
		t.Errorf("performance_samples 2 over a set of 3: %v", err)
	}
	// The daemon without a data root reads no data set; the CLI reads it
	// where it is.
	var fe *api.FieldError
	if _, err := Build(s, Env{}); !errors.As(err, &fe) || fe.Field != "data" {
		t.Errorf("no data root: %v", err)
	}
	s.Data = filepath.Join(root, "set.jsonl")
	if r, err := Build(s, Env{AnyData: true}); err != nil || r.Spec.Prompts == nil || r.Spec.Prompts.TotalSampleCount() != 3 {
		t.Errorf("the CLI's data set: %v", err)
	}
}

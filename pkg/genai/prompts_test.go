package genai

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseSharedPrefix(t *testing.T) {
	if p, err := ParseSharedPrefix(" 4:512 "); err != nil || p != (SharedPrefix{Count: 4, Tokens: 512}) || p.String() != "4:512" {
		t.Fatalf("ParseSharedPrefix(4:512) = %+v, %v", p, err)
	}
	for in, says := range map[string]string{
		"": "COUNT:TOKENS", "4": "COUNT:TOKENS", "a:5": "COUNT:TOKENS", "4:5:6": "COUNT:TOKENS",
		"0:5": "COUNT 0", "65537:5": "COUNT 65537", "4:0": "TOKENS 0", "4:1048577": "TOKENS 1048577",
	} {
		if _, err := ParseSharedPrefix(in); !errors.Is(err, ErrSharedPrefix) || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseSharedPrefix(%q) = %v; want ErrSharedPrefix saying %q", in, err, says)
		}
	}
}

func TestSyntheticLengthsAndText(t *testing.T) {
	in, out := Dist{Law: LawUniform, A: 5, B: 50}, Dist{Law: LawNormal, A: 100, B: 20}
	ps, err := Synthetic(200, in, out, SharedPrefix{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	distinctOut := map[int]bool{}
	for i, p := range ps {
		if p.InputTokens < 5 || p.InputTokens > 50 {
			t.Errorf("prompt %d: %d input tokens, outside uniform:5:50", i, p.InputTokens)
		}
		if got := CountTokens(p.Text); got != p.InputTokens {
			t.Errorf("prompt %d: InputTokens %d, its text counts %d", i, p.InputTokens, got)
		}
		if p.Text != SyntheticText(i, p.InputTokens) {
			t.Errorf("prompt %d (seed 0, no prefix) is not SyntheticText(%d, %d)", i, i, p.InputTokens)
		}
		distinctOut[p.MaxTokens] = true
	}
	if len(distinctOut) < 20 {
		t.Errorf("normal:100:20 gave only %d distinct output lengths in 200 prompts", len(distinctOut))
	}
	// Deterministic; a smaller set is a prefix of a larger one; the output
	// law does not move the input lengths.
	again, _ := Synthetic(50, in, Fixed(9), SharedPrefix{}, 0)
	for i := range again {
		if again[i].Text != ps[i].Text || again[i].InputTokens != ps[i].InputTokens {
			t.Fatalf("prompt %d differs between a set of 200 and one of 50 with another output law", i)
		}
		if again[i].MaxTokens != 9 {
			t.Fatalf("prompt %d: MaxTokens %d, want fixed 9", i, again[i].MaxTokens)
		}
	}
	other, _ := Synthetic(50, in, out, SharedPrefix{}, 1)
	same := 0
	for i := range other {
		if other[i].Text == ps[i].Text {
			same++
		}
	}
	if same > 2 {
		t.Errorf("seeds 0 and 1 gave %d identical prompts of 50", same)
	}
}

func TestSyntheticSharedPrefix(t *testing.T) {
	pre := SharedPrefix{Count: 3, Tokens: 40}
	ps, err := Synthetic(12, Fixed(10), Fixed(5), pre, 7)
	if err != nil {
		t.Fatal(err)
	}
	heads := map[string]bool{}
	for i, p := range ps {
		if p.InputTokens != 50 || CountTokens(p.Text) != 50 {
			t.Errorf("prompt %d: InputTokens %d, text %d tokens; want prefix 40 + 10", i, p.InputTokens, CountTokens(p.Text))
		}
		w := strings.Fields(p.Text)
		head := strings.Join(w[:40], " ")
		if first := strings.Join(strings.Fields(ps[i%3].Text)[:40], " "); head != first {
			t.Errorf("prompt %d does not share prompt %d's prefix", i, i%3)
		}
		heads[head] = true
		if tail := strings.Join(w[40:], " "); i >= 3 && tail == strings.Join(strings.Fields(ps[i-3].Text)[40:], " ") {
			t.Errorf("prompts %d and %d share their own text too", i, i-3)
		}
	}
	if len(heads) != 3 {
		t.Errorf("%d distinct prefixes, want 3", len(heads))
	}
}

func TestSyntheticErrors(t *testing.T) {
	for _, o := range []SyntheticOptions{
		{Total: 0},
		{Total: 5, Prefix: SharedPrefix{Count: 2}},
		{Total: 5, Prefix: SharedPrefix{Count: MaxPrefixes + 1, Tokens: 3}},
	} {
		if _, err := NewSynthetic(o); err == nil {
			t.Errorf("NewSynthetic(%+v) = nil error", o)
		}
	}
}

// TestPromptsLoad: the QSL writes text for the loaded set only, and drops
// the previous set's.
func TestPromptsLoad(t *testing.T) {
	p, err := NewSynthetic(SyntheticOptions{Total: 10, Performance: 4, Input: Fixed(6), Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if p.TotalSampleCount() != 10 || p.PerformanceSampleCount() != 4 || !p.Synthetic() || p.Source() != "synthetic" {
		t.Fatalf("counts %d/%d, synthetic %v, source %q", p.TotalSampleCount(), p.PerformanceSampleCount(), p.Synthetic(), p.Source())
	}
	if p.Prompt(0).Text != "" || p.Prompt(0).InputTokens != 6 || p.Prompt(0).MaxTokens != DefaultOutputTokens.Draw(nil) {
		t.Fatalf("before Load: %+v", *p.Prompt(0))
	}
	ctx := context.Background()
	if err := p.Load(ctx, []int{1, 5}); err != nil {
		t.Fatal(err)
	}
	want, _ := Synthetic(10, Fixed(6), Fixed(1), SharedPrefix{}, 3)
	if p.Prompt(1).Text != want[1].Text || p.Prompt(5).Text != want[5].Text || p.Prompt(2).Text != "" {
		t.Fatalf("after Load(1, 5): 1 %q, 5 %q, 2 %q", p.Prompt(1).Text, p.Prompt(5).Text, p.Prompt(2).Text)
	}
	if err := p.Load(ctx, []int{2}); err != nil {
		t.Fatal(err)
	}
	if p.Prompt(1).Text != "" || p.Prompt(2).Text != want[2].Text {
		t.Errorf("after Load(2): sample 1 kept %q, sample 2 %q", p.Prompt(1).Text, p.Prompt(2).Text)
	}
	if err := p.Load(ctx, []int{10}); err == nil {
		t.Error("Load of an index past the set: no error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.Load(cancelled, []int{0}); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context = %v", err)
	}
}

func TestFromPrompts(t *testing.T) {
	ps := []Prompt{{Text: "a b", InputTokens: 2, MaxTokens: 7}, {Text: "c", InputTokens: 1}, {Text: "d", InputTokens: 1}}
	p, err := FromPrompts("x.jsonl", ps, 0, Dist{Law: LawUniform, A: 100, B: 200}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.TotalSampleCount() != 3 || p.PerformanceSampleCount() != 3 || p.Synthetic() || p.Source() != "x.jsonl" {
		t.Fatalf("counts %d/%d synthetic %v", p.TotalSampleCount(), p.PerformanceSampleCount(), p.Synthetic())
	}
	if p.Prompt(0).MaxTokens != 7 {
		t.Errorf("the data set's own max_tokens 7 became %d", p.Prompt(0).MaxTokens)
	}
	for i := 1; i < 3; i++ {
		if m := p.Prompt(i).MaxTokens; m < 100 || m > 200 {
			t.Errorf("prompt %d: MaxTokens %d, not drawn from uniform:100:200", i, m)
		}
	}
	if err := p.Load(context.Background(), []int{0, 2}); err != nil || p.Prompt(1).Text != "c" {
		t.Errorf("Load of a data set: %v; texts stay: %q", err, p.Prompt(1).Text)
	}
	if _, err := FromPrompts("empty.jsonl", nil, 0, Dist{}, 0); err == nil {
		t.Error("an empty data set: no error")
	}
}

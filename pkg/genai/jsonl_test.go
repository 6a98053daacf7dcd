package genai

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadJSONLLayouts(t *testing.T) {
	data := strings.Join([]string{
		`{"prompt": "tell me a story", "max_tokens": 64}`,
		``,
		`   `,
		`{"prompt": "two words", "output_len": 9, "id": "extra keys are ignored"}`,
		`{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "why is the sky blue"}]}`,
		`{"id": "sg1", "conversations": [{"from": "system", "value": "ignored"}, {"from": "human", "value": "hello there"}, {"from": "gpt", "value": "hi how can I help"}, {"from": "human", "value": "later turn"}]}`,
		`{"conversations": [{"from": "human", "value": "a b c"}, {"from": "gpt", "value": "x y"}], "max_tokens": 3}`,
		`{"conversations": [{"from": "human", "value": "no answer"}]}`,
		`{"prompt": "same", "max_tokens": 5, "output_len": 5}`,
	}, "\n")
	path := filepath.Join(t.TempDir(), "d.jsonl")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Prompt{
		{Text: "tell me a story", InputTokens: 4, MaxTokens: 64},
		{Text: "two words", InputTokens: 2, MaxTokens: 9},
		{Messages: []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "why is the sky blue"}}, InputTokens: 7},
		{Text: "hello there", InputTokens: 2, MaxTokens: 5},
		{Text: "a b c", InputTokens: 3, MaxTokens: 3},
		{Text: "no answer", InputTokens: 2},
		{Text: "same", InputTokens: 1, MaxTokens: 5},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadJSONL =\n%+v\nwant\n%+v", got, want)
	}
}

func TestLoadJSONLErrorsNameTheLine(t *testing.T) {
	for body, says := range map[string]string{
		"{\"prompt\": \"ok\"}\nnot json":                                  "x.jsonl:2: not a JSON object",
		"{\"prompt\": \"ok\"}\n\n[1, 2]":                                  "x.jsonl:3: not a JSON object",
		`{"max_tokens": 5}`:                                               `x.jsonl:1: want exactly one of "prompt", "messages" and "conversations"`,
		`{"prompt": "a", "messages": [{"role": "user", "content": "b"}]}`: "exactly one of",
		`{"prompt": "   "}`:                                               `"prompt" is empty`,
		`{"prompt": 5}`:                                                   `"prompt": want a string, got number`,
		`{"messages": []}`:                                                `"messages" is empty`,
		`{"messages": [{"content": "hi"}]}`:                               `messages[0] has no "role"`,
		`{"messages": [{"role": "user", "content": [{"type": "text"}]}]}`: `"messages.content": want a string, got array`,
		`{"messages": [{"role": "user", "content": ""}]}`:                 "have no content",
		`{"conversations": [{"from": "gpt", "value": "x"}]}`:              `no turn from "human"`,
		`{"conversations": [{"from": "human", "value": ""}]}`:             "conversations[0]: the first human turn is empty",
		`{"prompt": "a", "max_tokens": 0}`:                                `"max_tokens" 0 is not between 1`,
		`{"prompt": "a", "output_len": 2000000}`:                          `"output_len" 2000000 is not between 1`,
		`{"prompt": "a", "max_tokens": 1.5}`:                              `"max_tokens": want a whole number`,
		`{"prompt": "a", "max_tokens": 4, "output_len": 5}`:               "differ",
		"":       "no prompts",
		"\n  \n": "no prompts",
	} {
		_, err := ReadJSONL(strings.NewReader(body), "x.jsonl")
		if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), says) {
			t.Errorf("ReadJSONL(%q) = %v; want ErrData saying %q", body, err, says)
		}
	}
	if _, err := LoadJSONL(filepath.Join(t.TempDir(), "missing.jsonl")); !errors.Is(err, ErrData) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadJSONL of a missing file = %v", err)
	}
}

// TestReadJSONLLongLines: a line longer than the reader's buffer is read
// whole, and the last line needs no newline.
func TestReadJSONLLongLines(t *testing.T) {
	long := SyntheticText(1, 40000) // ≈ 200 kB, over the 64 kB buffer
	body := `{"prompt": "` + long + `"}` + "\n" + `{"prompt": "last"}`
	got, err := ReadJSONL(strings.NewReader(body), "long.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Text != long || got[0].InputTokens != 40000 || got[1].Text != "last" {
		t.Errorf("got %d prompts; first has %d tokens", len(got), got[0].InputTokens)
	}
}

func FuzzLoadJSONL(f *testing.F) {
	for _, s := range []string{
		`{"prompt": "hello world", "max_tokens": 3}`,
		`{"messages": [{"role": "user", "content": "hi"}], "output_len": 2}`,
		`{"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a b"}]}` + "\n" + `{"prompt": "x"}`,
		"\n\n{}",
		`{"prompt": "a", "max_tokens": -1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := ReadJSONL(strings.NewReader(string(b)), "fuzz.jsonl")
		if err != nil {
			if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "fuzz.jsonl") {
				t.Fatalf("error %v does not wrap ErrData and name the file", err)
			}
			return
		}
		if len(ps) == 0 {
			t.Fatal("no error and no prompts")
		}
		for i, p := range ps {
			if (p.Text == "") == (p.Messages == nil) {
				t.Fatalf("prompt %d: want exactly one of Text and Messages: %+v", i, p)
			}
			if p.InputTokens < 1 || p.MaxTokens < 0 || p.MaxTokens > MaxPromptTokens {
				t.Fatalf("prompt %d: lengths out of range: %+v", i, p)
			}
		}
	})
}

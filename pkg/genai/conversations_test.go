package genai

import (
	"errors"
	"strings"
	"testing"
)

func TestReadConversations(t *testing.T) {
	jsonl := `{"conversations":[{"from":"human","value":"hi there"},{"from":"gpt","value":"hello"},{"from":"human","value":"how are you"}]}

{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"one"},{"role":"assistant","content":"1"},{"role":"user","content":"two"},{"role":"user","content":"three"}]}
`
	for name, in := range map[string]string{"jsonl": jsonl, "array": "[" + strings.ReplaceAll(strings.TrimSpace(strings.ReplaceAll(jsonl, "\n\n", "\n")), "\n", ",") + "]"} {
		c, err := ReadConversations(strings.NewReader(in), "c")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := c.Turns(); len(got) != 2 || got[0] != 2 || got[1] != 3 {
			t.Fatalf("%s: turns %v", name, got)
		}
		if u, ok := c.UserTurn(3, 2); !ok || u != "two" { // session 3 replays conversation 1
			t.Errorf("%s: session 3 turn 2: %q %v", name, u, ok)
		}
		if _, ok := c.UserTurn(0, 3); ok {
			t.Errorf("%s: a turn past the conversation", name)
		}
	}
}

// Bad input names the line (JSON Lines) or the element (an array).
func TestReadConversationsRefuses(t *testing.T) {
	good := `{"conversations":[{"from":"human","value":"hi"}]}` + "\n"
	for in, want := range map[string]string{
		"":                            "no conversations",
		good + "not json\n":           "c:2:",
		good + `{"conversations":[]}`: "c:2: no user turn",
		good + `{"messages":[{"role":"user","content":" "}]}`:                   "c:2: user turn 1 is empty",
		good + `{"prompt":"x"}`:                                                 "c:2: want exactly one",
		good + `{"conversations":[{"from":"human","value":"a"}],"messages":[]}`: "c:2: want exactly one",
		`[` + strings.TrimSpace(good) + `, 3]`:                                  "element 1",
		`[` + strings.TrimSpace(good):                                           "does not end",
		"{" + strings.Repeat("x", MaxJSONLLine+2):                               "longer than",
	} {
		_, err := ReadConversations(strings.NewReader(in), "c")
		if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: got %v, want %q", in, err, want)
		}
	}
}

// Any input is a data set or an ErrData, never a panic; a data set read
// has only non-empty user turns.
func FuzzReadConversations(f *testing.F) {
	f.Add(`{"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"yo"}]}`)
	f.Add(`[{"messages":[{"role":"user","content":"a"}]}]`)
	f.Add("[")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ReadConversations(strings.NewReader(in), "f")
		if err != nil {
			if !errors.Is(err, ErrData) {
				t.Fatalf("error %v does not wrap ErrData", err)
			}
			return
		}
		for s, n := range c.Turns() {
			for k := 1; k <= n; k++ {
				if u, ok := c.UserTurn(s, k); !ok || CountTokens(u) == 0 {
					t.Fatalf("conversation %d turn %d: %q", s, k, u)
				}
			}
		}
	})
}

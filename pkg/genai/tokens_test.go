package genai

import (
	"strings"
	"testing"
	"unicode"
)

func TestCountTokensIsFieldsCount(t *testing.T) {
	for _, s := range []string{
		"", " ", "one", "two words", "  lead and trail  ", "tab\tnew\nline\r\nvt\v ff\f",
		"nbsp\u00a0splits", "ideographic\u3000space", "no-break‐hyphen stays one", "héllo wörld",
		"\xff\xfe bad utf8", "a  b   c",
	} {
		if got, want := CountTokens(s), len(strings.Fields(s)); got != want {
			t.Errorf("CountTokens(%q) = %d, strings.Fields gives %d", s, got, want)
		}
	}
}

func TestCountTokensAllocatesNothing(t *testing.T) {
	s := SyntheticText(3, 500)
	if a := testing.AllocsPerRun(100, func() { CountTokens(s) }); a != 0 {
		t.Errorf("CountTokens allocates %v times", a)
	}
}

func TestSyntheticText(t *testing.T) {
	for _, n := range []int{1, 2, 7, 8, 9, 100, 1000} {
		s := SyntheticText(42, n)
		if got := CountTokens(s); got != n {
			t.Errorf("SyntheticText(42, %d) has %d pseudo-tokens", n, got)
		}
		if s != SyntheticText(42, n) {
			t.Errorf("SyntheticText(42, %d) is not deterministic", n)
		}
		if strings.Contains(s, "  ") || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
			t.Errorf("SyntheticText(42, %d) is not single-spaced: %q", n, s)
		}
	}
	if SyntheticText(0, 0) != "" || SyntheticText(0, -3) != "" {
		t.Error("no tokens should give no text")
	}
	// A shorter text of a sample is a prefix of its longer one, and samples
	// differ from their first words.
	long, short := SyntheticText(7, 64), SyntheticText(7, 10)
	if !strings.HasPrefix(long, short+" ") {
		t.Errorf("the 10-word text %q does not start the 64-word one %q", short, long)
	}
	seen := map[string]int{}
	for i := range 1000 {
		head := SyntheticText(i, 4)
		if j, ok := seen[head]; ok {
			t.Fatalf("samples %d and %d start with the same 4 words %q", j, i, head)
		}
		seen[head] = i
	}
}

// TestSyntheticTextGolden pins the words: a change to the list or the
// generator changes every run's prompts (and a server's cache between
// releases), so it must be deliberate.
func TestSyntheticTextGolden(t *testing.T) {
	const want = "river one sun even window some would own keep early name is"
	if got := SyntheticText(0, 12); got != want {
		t.Errorf("SyntheticText(0, 12) = %q, want %q", got, want)
	}
}

func TestWordList(t *testing.T) {
	seen := map[string]bool{}
	for i, w := range words {
		if w == "" || strings.IndexFunc(w, unicode.IsSpace) >= 0 || w != strings.ToLower(w) {
			t.Errorf("words[%d] = %q: want one lowercase word", i, w)
		}
		if seen[w] {
			t.Errorf("words[%d] = %q is listed twice", i, w)
		}
		seen[w] = true
	}
}

func BenchmarkCountTokens(b *testing.B) {
	s := SyntheticText(1, 1024)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		CountTokens(s)
	}
}

// BenchmarkSyntheticText: the text of one 1024-token prompt, as Load
// writes it for each loaded sample.
func BenchmarkSyntheticText(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		SyntheticText(i, 1024)
	}
}

// TestBelievedTokens: a server's output token count is believed within
// the slack the APIs allow, and set aside for the responses counted
// beyond it (issue 26: 1000 completion tokens for max_tokens 8; 100,000
// output ids).
func TestBelievedTokens(t *testing.T) {
	cases := []struct {
		claimed, responses, max, want int
		ok                            bool
	}{
		{0, 7, 8, 7, true},           // no claim: the responses
		{8, 8, 8, 8, true},           // one token an event
		{8, 3, 8, 8, true},           // several tokens an event
		{128, 1, 128, 128, true},     // one answer, not streamed
		{1000, 8, 8, 8, false},       // over max_tokens
		{100000, 1, 8, 1, false},     // output_ids over max_tokens
		{3, 8, 8, 8, false},          // fewer than the events
		{2000, 10, 0, 10, false},     // 200 tokens an event
		{640, 10, 0, 640, true},      // 64 an event: believed
		{100000, 1, 0, 100000, true}, // one answer, nothing to weigh it against
	}
	for _, c := range cases {
		n, ok := BelievedTokens(c.claimed, c.responses, c.max)
		if n != c.want || ok != c.ok {
			t.Errorf("BelievedTokens(%d, %d, %d) = %d, %v; want %d, %v", c.claimed, c.responses, c.max, n, ok, c.want, c.ok)
		}
	}
}

package genai

import (
	"strings"
	"sync"
	"testing"
)

// A trace request's prompt: its length in pseudo-tokens, its blocks the
// same text for the same hash id in every request (a prefix cache's
// reuse), a cut last block a prefix of the whole block, the rest the
// request's own text; the same seed and index give the same prompt.
func TestTracePrompt(t *testing.T) {
	a := TracePrompt(7, 1, 1100, 33, []int{5, 9, 4})
	b := TracePrompt(7, 2, 700, 1, []int{5, 8})
	c := TracePrompt(7, 3, 1500, 1, []int{9})
	if a.InputTokens != 1100 || CountTokens(a.Text) != 1100 || a.MaxTokens != 33 {
		t.Fatalf("a: %d tokens (counted %d), max %d; want 1100, 33", a.InputTokens, CountTokens(a.Text), a.MaxTokens)
	}
	wa, wb, wc := strings.Fields(a.Text), strings.Fields(b.Text), strings.Fields(c.Text)
	if len(wb) != 700 || len(wc) != 1500 {
		t.Fatalf("lengths %d, %d; want 700, 1500", len(wb), len(wc))
	}
	block := func(w []string, j int) string { return strings.Join(w[j*512:min(len(w), (j+1)*512)], " ") }
	if block(wa, 0) != block(wb, 0) {
		t.Error("hash id 5's block differs between two requests")
	}
	if block(wa, 1) != block(wc, 0) {
		t.Error("hash id 9's block differs between block 1 of one request and block 0 of another")
	}
	if strings.Join(wb[512:], " ") == strings.Join(wa[:188], " ") {
		t.Error("different hash ids gave the same text")
	}
	// a's last block is hash id 4's first 76 words, a prefix of its whole block.
	whole := strings.Fields(TraceText(7, 99, 512, []int{4}))
	if block(wa, 2) != strings.Join(whole[:76], " ") {
		t.Error("a cut block is not a prefix of its block")
	}
	// c's blocks run out at 512 tokens: the rest is its own text, not a
	// block's, and not another request's.
	own := strings.Fields(TraceText(7, 3, 988, nil))
	if strings.Join(wc[512:], " ") != strings.Join(own, " ") {
		t.Error("the text past the blocks is not the request's own")
	}
	if TraceText(7, 4, 988, nil) == strings.Join(own, " ") || TraceText(8, 3, 988, nil) == strings.Join(own, " ") {
		t.Error("another index or seed gave the same own text")
	}
	if again := TracePrompt(7, 1, 1100, 33, []int{5, 9, 4}); again.Text != a.Text {
		t.Error("the same seed, index and request gave another prompt")
	}
	if p := TracePrompt(7, 1, 0, 1, []int{1}); p.Text != "" || p.InputTokens != 0 {
		t.Errorf("a zero length: %+v", p)
	}
}

// TraceTexts' cached blocks give TracePrompt's text, whichever ids share
// a slot, in any order, from several goroutines.
func TestTraceTextsCache(t *testing.T) {
	c := NewTraceTexts(7)
	ids := [][]int{{1, 2, 3}, {1, 2 + traceCacheSlots, 3}, {1, 2, 5}, {2 + 2*traceCacheSlots}, {3, 1}}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 50 {
				h := ids[(g+k)%len(ids)]
				n := 512*len(h) - k // some cut, some whole
				if got, want := c.Prompt(uint64(k), n, 3, h), TracePrompt(7, uint64(k), n, 3, h); got.Text != want.Text || got.InputTokens != n || got.MaxTokens != 3 {
					t.Errorf("ids %v, %d tokens: the cached prompt differs", h, n)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkTracePrompt: the cost of synthesising a trace request's
// prompt on the issuer's goroutine (Mooncake's mean is about 8,000
// tokens: 16 blocks).
func BenchmarkTracePrompt(b *testing.B) {
	ids := make([]int, 16)
	for i := range ids {
		ids[i] = i * 3
	}
	b.Run("drawn", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			_ = TraceText(1, uint64(i), 8000, ids)
		}
	})
	b.Run("cached", func(b *testing.B) {
		c := NewTraceTexts(1)
		b.ReportAllocs()
		for i := range b.N {
			_ = c.Prompt(uint64(i), 8000, 1, ids)
		}
	})
}

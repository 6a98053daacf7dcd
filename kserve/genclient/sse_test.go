package genclient

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// parseAll feeds the stream in pieces of at most step bytes and returns
// the events as "type|data" strings, and the first error (or the end's).
func parseAll(in []byte, step, max int) ([]string, error) {
	var p sseParser
	p.reset(max)
	var got []string
	for len(in) > 0 {
		space, err := p.space()
		if err != nil {
			return got, err
		}
		n := copy(space[:min(len(space), step)], in)
		in = in[n:]
		p.wrote(n)
		for {
			ev, ok, err := p.next()
			if err != nil {
				return got, err
			}
			if !ok {
				break
			}
			got = append(got, string(ev.Type)+"|"+string(ev.Data))
		}
	}
	return got, p.end()
}

func TestSSEParserFollowsTheStandard(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"LF", "data: a\n\ndata: b\n\n", []string{"|a", "|b"}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"|a", "|b"}},
		{"CR", "data: a\r\rdata: b\r\r", []string{"|a", "|b"}},
		{"no space after the colon", "data:a\n\n", []string{"|a"}},
		{"only one space is dropped", "data:  a\n\n", []string{"| a"}},
		{"lines of one event joined by LF", "data: a\ndata: b\n\n", []string{"|a\nb"}},
		{"comments and id and retry ignored", ": keep-alive\nid: 7\nretry: 10\ndata: x\n\n", []string{"|x"}},
		{"event type, reset after dispatch", "event: error\ndata: e\n\ndata: m\n\n", []string{"error|e", "|m"}},
		{"no data, no event", "event: ping\n\ndata: m\n\n", []string{"|m"}},
		{"data field without a colon is empty data", "data\n\n", []string{"|"}},
		{"blank lines between events", "\n\n\ndata: a\n\n\n", []string{"|a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for step := 1; step <= len(c.in); step++ {
				got, err := parseAll([]byte(c.in), step, 1<<10)
				if err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Fatalf("in pieces of %d: %q, %v; want %q", step, got, err, c.want)
				}
			}
		})
	}
}

func TestSSEParserRefusesBadFraming(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"a line that is no field", "data: a\n\nHTTP/1.1 200 OK\n\n", "bad SSE line"},
		{"an unknown field", "dat: a\n\n", "bad SSE line"},
		{"ends inside an event", "data: a\n", "inside an SSE event"},
		{"ends inside a line", "data: a\n\ndata: b", "inside an SSE line"},
		{"a line over the bound", "data: " + strings.Repeat("x", 3000) + "\n\n", "than 2000 bytes"},
		{"a line with no end over the buffer", "data: " + strings.Repeat("x", 9000), "longer than 2000 bytes"},
		{"an event over the bound", strings.Repeat("data: "+strings.Repeat("x", 100)+"\n", 30) + "\n", "larger than 2000 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseAll([]byte(c.in), 7, 2000)
			if !errors.Is(err, genai.ErrStream) || !errors.Is(err, kserve.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v; want genai.ErrStream and kserve.ErrMalformed saying %q", err, c.want)
			}
		})
	}
}

func TestScanAnswerReadsEveryAPIsShape(t *testing.T) {
	cases := []struct {
		name, in string
		want     answerInfo
		ok       bool
	}{
		{"chat delta", `{"id":"c","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`, answerInfo{text: true}, true},
		{"chat role only", `{"choices":[{"delta":{"role":"assistant","content":""}}]}`, answerInfo{}, true},
		{"chat reasoning", `{"choices":[{"delta":{"reasoning_content":"hm"}}]}`, answerInfo{text: true}, true},
		{"escaped content", `{"choices":[{"delta":{"content":"\"}"}}]}`, answerInfo{text: true}, true},
		{"completion text", `{"choices":[{"text":" a","index":0,"logprobs":null}],"usage":null}`, answerInfo{text: true}, true},
		{"usage chunk", `{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}}`, answerInfo{usage: true, outTokens: 34, inTokens: 12}, true},
		{"message", `{"choices":[{"message":{"role":"assistant","content":"x y"}}],"usage":{"completion_tokens":2}}`, answerInfo{text: true, usage: true, outTokens: 2}, true},
		{"triton", `{"model_name":"m","model_version":"1","text_output":"t","output_ids":[5, 6]}`, answerInfo{text: true, ids: 2}, true},
		{"triton error", `{"error":"boom"}`, answerInfo{errMsg: []byte(`"boom"`)}, true},
		{"openai error", `{"error":{"message":"m","code":400}}`, answerInfo{errMsg: []byte(`{"message":"m","code":400}`)}, true},
		{"null error", `{"error":null,"text_output":"a"}`, answerInfo{text: true}, true},
		{"not an object", `[DONE]`, answerInfo{}, false},
		{"truncated", `{"choices":[{"delta":{"content":"a"`, answerInfo{text: true}, false},
		{"trailing bytes", `{} x`, answerInfo{}, false},
		{"nested unknowns", `{"a":{"b":[1,2,{"c":null}],"d":true},"text_output":"z"}`, answerInfo{text: true}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got answerInfo
			ok := scanAnswer([]byte(c.in), &got)
			if ok != c.ok || fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", c.want) && c.ok {
				t.Fatalf("scanAnswer(%s) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
}

// tokenStream is n OpenAI chat chunks of one token each, as vLLM sends them.
func tokenStream(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w%d\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", i)
	}
	return []byte(b.String())
}

// parseTokens parses a stream as the client does (SSE, then each event's
// JSON), returning the token-bearing events.
func parseTokens(p *sseParser, in []byte, info *answerInfo) int {
	p.reset(1 << 20)
	tokens := 0
	for len(in) > 0 {
		space, _ := p.space()
		n := copy(space, in)
		in = in[n:]
		p.wrote(n)
		for {
			ev, ok, _ := p.next()
			if !ok {
				break
			}
			if scanAnswer(ev.Data, info) && info.text {
				tokens++
			}
		}
	}
	return tokens
}

// TestParsingATokenAllocatesNothing: once its buffers have grown, the
// parser takes a stream's tokens without one allocation (the hot path at
// tens of thousands of tokens a second).
func TestParsingATokenAllocatesNothing(t *testing.T) {
	in := tokenStream(256)
	var p sseParser
	var info answerInfo
	if n := parseTokens(&p, in, &info); n != 256 {
		t.Fatalf("parsed %d tokens, want 256", n)
	}
	if a := testing.AllocsPerRun(20, func() { parseTokens(&p, in, &info) }); a != 0 {
		t.Errorf("%v allocations per 256-token stream, want 0", a)
	}
}

// BenchmarkParseToken: one op is one token's event (SSE framing and the
// JSON walk); allocs/op is the allocations per token.
func BenchmarkParseToken(b *testing.B) {
	const n = 256
	in := tokenStream(n)
	var p sseParser
	var info answerInfo
	b.ReportAllocs()
	b.SetBytes(int64(len(in) / n))
	for i := 0; i < b.N; i += n {
		parseTokens(&p, in, &info)
	}
}

// FuzzSSEParser: no input panics the parser or the JSON walk, and the
// events do not depend on how the stream was cut into reads.
func FuzzSSEParser(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n"), uint8(3))
	f.Add([]byte("event: error\r\ndata: {\"error\":\"x\"}\r\n\r\n"), uint8(1))
	f.Add([]byte(": c\rdata:{\"text_output\":\"t\",\"output_ids\":[1,2]}\r\r"), uint8(5))
	f.Add([]byte("data: {\"usage\":{\"completion_tokens\":3}}\n\nbogus\n"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		whole, werr := parseAll(in, len(in)+1, 512)
		cut, cerr := parseAll(in, int(step)+1, 512)
		if (werr == nil) != (cerr == nil) && !strings.Contains(fmt.Sprint(werr, cerr), "longer than") {
			t.Fatalf("whole: %v; in pieces of %d: %v", werr, int(step)+1, cerr)
		}
		if werr == nil && cerr == nil && fmt.Sprint(whole) != fmt.Sprint(cut) {
			t.Fatalf("whole: %q; in pieces of %d: %q", whole, int(step)+1, cut)
		}
		for _, ev := range whole {
			var info answerInfo
			scanAnswer([]byte(ev), &info)
		}
		if werr != nil && (!errors.Is(werr, genai.ErrStream) || !errors.Is(werr, kserve.ErrMalformed)) {
			t.Fatalf("error %v is not a malformed stream", werr)
		}
	})
}

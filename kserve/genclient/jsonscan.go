package genclient

// The few fields of a generative answer this client reads, found by
// walking the JSON in place: no decoding into values, no allocation. A
// string is only looked at for being empty or not (its raw bytes, escapes
// and all), a number only when it is a count.

import "bytes"

// answerInfo is what one JSON answer (an SSE event's data, or a whole
// non-streamed body) says.
type answerInfo struct {
	text      bool   // it carries output text (a non-empty content, text or text_output)
	ids       int    // len(output_ids), Triton's token ids, when given
	errMsg    []byte // the raw value of a top-level "error", when there is one
	usage     bool   // a "usage" object was there
	outTokens int    // usage.completion_tokens
	inTokens  int    // usage.prompt_tokens
}

// jscan walks b from i; the first syntax error stops it (ok false).
type jscan struct {
	b  []byte
	i  int
	ok bool
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next non-space byte, 0 at the end.
func (s *jscan) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jscan) fail() { s.ok = false; s.i = len(s.b) }

// str reads a string and returns its raw content.
func (s *jscan) str() []byte {
	if s.peek() != '"' {
		s.fail()
		return nil
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			s.i = j + 1
			return s.b[start:j]
		}
	}
	s.fail()
	return nil
}

// skip passes over one value of any kind.
func (s *jscan) skip() {
	switch s.peek() {
	case '"':
		s.str()
	case '{':
		for s.key() != nil {
			s.skip()
		}
	case '[':
		for s.elem() {
			s.skip()
		}
	default:
		start := s.i
		for s.i < len(s.b) && !scalarEnd(s.b[s.i]) {
			s.i++
		}
		if s.i == start {
			s.fail()
		}
	}
}

// key moves into an object (at its '{') or past the previous member's
// value (at ',' or '}'), returning the next member's key, or nil at the
// object's end (or an error).
func (s *jscan) key() []byte {
	switch s.peek() {
	case '{':
		s.i++
		if s.peek() == '}' {
			s.i++
			return nil
		}
	case ',':
		s.i++
	case '}':
		s.i++
		return nil
	default:
		s.fail()
		return nil
	}
	k := s.str()
	if !s.ok || s.peek() != ':' {
		s.fail()
		return nil
	}
	s.i++
	if k == nil {
		k = s.b[s.i:s.i] // an empty key is still a key
	}
	return k
}

// elem moves into an array (at '[') or past the previous element, saying
// whether an element follows.
func (s *jscan) elem() bool {
	switch s.peek() {
	case '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return false
		}
		return true
	case ',':
		s.i++
		return true
	case ']':
		s.i++
		return false
	}
	s.fail()
	return false
}

func scalarEnd(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// count reads a non-negative integer (a count); anything else is 0.
func (s *jscan) count() int {
	s.ws()
	start := s.i
	s.skip()
	n := 0
	for _, c := range s.b[start:s.i] {
		if c < '0' || c > '9' || n > 1<<40 {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// nonEmpty says whether the value is a non-empty string (null and the
// empty string are no output).
func (s *jscan) nonEmpty() bool {
	if s.peek() != '"' {
		s.skip()
		return false
	}
	return len(s.str()) > 0
}

// scanAnswer reads an answer of any of the four APIs: OpenAI's choices
// (delta or message content, reasoning, text) and usage, Triton's
// text_output and output_ids, and a top-level error. It reports false when
// b is not one JSON object.
func scanAnswer(b []byte, info *answerInfo) bool {
	*info = answerInfo{}
	s := jscan{b: b, ok: true}
	if s.peek() != '{' {
		return false
	}
	for k := s.key(); k != nil; k = s.key() {
		switch string(k) {
		case "choices":
			s.choices(info)
		case "text_output":
			info.text = s.nonEmpty() || info.text
		case "output_ids":
			for s.elem() {
				s.skip()
				info.ids++
			}
		case "usage":
			s.usage(info)
		case "error":
			start := s.i
			s.skip()
			info.errMsg = bytes.TrimSpace(b[start:s.i])
			if string(info.errMsg) == "null" {
				info.errMsg = nil
			}
		default:
			s.skip()
		}
	}
	s.ws()
	return s.ok && s.i == len(b)
}

func (s *jscan) choices(info *answerInfo) {
	if s.peek() != '[' {
		s.skip()
		return
	}
	for s.elem() {
		if s.peek() != '{' {
			s.skip()
			continue
		}
		for k := s.key(); k != nil; k = s.key() {
			switch string(k) {
			case "text":
				info.text = s.nonEmpty() || info.text
			case "delta", "message":
				s.content(info)
			default:
				s.skip()
			}
		}
	}
}

// content reads a chat delta or message: content, or a reasoning model's
// reasoning_content / reasoning, each a token when not empty.
func (s *jscan) content(info *answerInfo) {
	if s.peek() != '{' {
		s.skip()
		return
	}
	for k := s.key(); k != nil; k = s.key() {
		switch string(k) {
		case "content", "reasoning_content", "reasoning":
			info.text = s.nonEmpty() || info.text
		default:
			s.skip()
		}
	}
}

func (s *jscan) usage(info *answerInfo) {
	if s.peek() != '{' {
		s.skip() // null before the last chunk
		return
	}
	info.usage = true
	for k := s.key(); k != nil; k = s.key() {
		switch string(k) {
		case "completion_tokens":
			info.outTokens = s.count()
		case "prompt_tokens":
			info.inTokens = s.count()
		default:
			s.skip()
		}
	}
}

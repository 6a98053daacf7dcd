package server

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestGenFormatsAreJSON: every event each format writes is `data: ` and
// one valid JSON object (or [DONE]) ending with a blank line, and a
// whole answer is one JSON object; ids a client chose are escaped.
func TestGenFormatsAreJSON(t *testing.T) {
	id := "q\"\\\n\u2028"
	formats := map[string]genFormat{
		"triton":           newTritonFormat("m", "1", id),
		"triton-noid":      newTritonFormat("m", "1", ""),
		"completions":      newOpenAIFormat(false, true, false, id, "m", 1),
		"completions+use":  newOpenAIFormat(false, true, true, id, "m", 1),
		"chat":             newOpenAIFormat(true, true, false, id, "m", 1),
		"chat+usage":       newOpenAIFormat(true, true, true, id, "m", 1),
		"chat-whole":       newOpenAIFormat(true, false, false, id, "m", 1),
		"completion-whole": newOpenAIFormat(false, false, false, id, "m", 1),
	}
	for name, f := range formats {
		var b []byte
		b = f.token(b, GenToken{Text: "the", ID: 7}, true)
		b = f.token(b, GenToken{Text: " end", ID: 8, Index: 1, Last: true, Reason: "length"}, false)
		b = f.tail(b, genUsage{3, 2}, true)
		b = f.errorEvent(b, "bad \"thing\"")
		events := bytes.Split(bytes.TrimSuffix(b, []byte("\n\n")), []byte("\n\n"))
		for _, ev := range events {
			data, ok := bytes.CutPrefix(ev, []byte("data: "))
			if !ok {
				t.Errorf("%s: event %q does not start with data: ", name, ev)
				continue
			}
			var v map[string]any
			if string(data) != "[DONE]" && json.Unmarshal(data, &v) != nil {
				t.Errorf("%s: event %q is not a JSON object", name, data)
			}
		}
		var v map[string]any
		whole := f.whole([]byte("the end \"quoted\""), []int32{7, 8}, "stop", genUsage{3, 2})
		if err := json.Unmarshal(whole, &v); err != nil {
			t.Errorf("%s: whole answer %s: %v", name, whole, err)
		}
		if name != "triton-noid" && v["id"] != id {
			t.Errorf("%s: whole answer's id %q, want %q", name, v["id"], id)
		}
	}
}

package genai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
)

// ErrData is a malformed prompt data set (`--data FILE.jsonl`).
var ErrData = errors.New("prompt data")

// MaxJSONLLine bounds one line of a data set: no prompt is longer.
const MaxJSONLLine = 64 << 20

// jsonlRecord is one line of a data set, in any of its layouts. Other keys
// (ShareGPT's "id", a data set's own) are ignored.
type jsonlRecord struct {
	Prompt        *string        `json:"prompt"`
	Messages      []Message      `json:"messages"`
	Conversations []shareGPTTurn `json:"conversations"`
	MaxTokens     *int           `json:"max_tokens"`
	OutputLen     *int           `json:"output_len"`
}

type shareGPTTurn struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

// LoadJSONL reads a prompt data set: JSON Lines, one prompt per line (blank
// lines skipped), in one of three layouts:
//
//   - {"prompt": "..."}: a completion prompt;
//   - {"messages": [{"role": "system"|"user"|..., "content": "..."}, ...]}:
//     a chat prompt, sent as given;
//   - ShareGPT's {"conversations": [{"from": "human", "value": "..."},
//     {"from": "gpt", "value": "..."}, ...]}: the first human turn is the
//     prompt, and the gpt turn after it gives the output length (its
//     pseudo-token count) when the line gives none.
//
// "max_tokens" or "output_len" (the same if both) is the output length;
// without one (nor a gpt turn) the run's --output-tokens law draws it
// (FromPrompts). InputTokens is the prompt's CountTokens (a chat prompt's:
// the sum over its messages' contents). Errors wrap ErrData and name the
// file and line.
func LoadJSONL(path string) ([]Prompt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	defer f.Close()
	return ReadJSONL(f, path)
}

// ReadJSONL is LoadJSONL over r; name names it in errors.
func ReadJSONL(r io.Reader, name string) ([]Prompt, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var ps []Prompt
	for line := 1; ; line++ {
		b, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s:%d: %w", ErrData, name, line, err)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			p, perr := parseRecord(b)
			if perr != nil {
				return nil, fmt.Errorf("%w: %s:%d: %w", ErrData, name, line, perr)
			}
			ps = append(ps, p)
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%w: %s: no prompts (want JSON Lines: one {\"prompt\": ...}, {\"messages\": [...]} or {\"conversations\": [...]} per line)", ErrData, name)
	}
	return ps, nil
}

// readLine is the next line without its newline, at most MaxJSONLLine
// bytes; io.EOF with the last line.
func readLine(br *bufio.Reader) ([]byte, error) {
	var long []byte
	for {
		b, err := br.ReadSlice('\n')
		if len(long)+len(b) > MaxJSONLLine+1 {
			return nil, fmt.Errorf("a line is longer than %d bytes", MaxJSONLLine)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, b...)
			continue
		case long != nil:
			b = append(long, b...)
		}
		return bytes.TrimSuffix(b, []byte{'\n'}), err
	}
}

func parseRecord(b []byte) (Prompt, error) {
	var rec jsonlRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			return Prompt{}, fmt.Errorf("%q: want %s, got %s", te.Field, kindName(te.Type), te.Value)
		}
		return Prompt{}, fmt.Errorf("not a JSON object of a known layout: %w", err)
	}
	p, err := rec.prompt()
	if err != nil {
		return Prompt{}, err
	}
	if err := rec.outputLen(&p); err != nil {
		return Prompt{}, err
	}
	return p, nil
}

// prompt is the record's prompt, its output length from a ShareGPT answer
// (0: none).
func (rec *jsonlRecord) prompt() (Prompt, error) {
	n := 0
	for _, set := range []bool{rec.Prompt != nil, rec.Messages != nil, rec.Conversations != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return Prompt{}, errors.New(`want exactly one of "prompt", "messages" and "conversations"`)
	}
	switch {
	case rec.Prompt != nil:
		if CountTokens(*rec.Prompt) == 0 {
			return Prompt{}, errors.New(`"prompt" is empty`)
		}
		return Prompt{Text: *rec.Prompt, InputTokens: CountTokens(*rec.Prompt)}, nil
	case rec.Messages != nil:
		return messagesPrompt(rec.Messages)
	}
	return shareGPTPrompt(rec.Conversations)
}

func messagesPrompt(ms []Message) (Prompt, error) {
	if len(ms) == 0 {
		return Prompt{}, errors.New(`"messages" is empty`)
	}
	n := 0
	for i, m := range ms {
		if strings.TrimSpace(m.Role) == "" {
			return Prompt{}, fmt.Errorf(`messages[%d] has no "role"`, i)
		}
		n += CountTokens(m.Content)
	}
	if n == 0 {
		return Prompt{}, errors.New(`"messages" have no content`)
	}
	return Prompt{Messages: ms, InputTokens: n}, nil
}

// shareGPTPrompt: the first human (or user) turn, and the next gpt (or
// assistant) turn's length as the output length.
func shareGPTPrompt(turns []shareGPTTurn) (Prompt, error) {
	for i, t := range turns {
		if !isFrom(t.From, "human", "user") {
			continue
		}
		n := CountTokens(t.Value)
		if n == 0 {
			return Prompt{}, fmt.Errorf("conversations[%d]: the first human turn is empty", i)
		}
		p := Prompt{Text: t.Value, InputTokens: n}
		for _, a := range turns[i+1:] {
			if isFrom(a.From, "gpt", "assistant") {
				p.MaxTokens = min(CountTokens(a.Value), MaxPromptTokens)
				break
			}
		}
		return p, nil
	}
	return Prompt{}, errors.New(`"conversations" has no turn from "human"`)
}

func isFrom(from string, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(from, n) {
			return true
		}
	}
	return false
}

// outputLen applies max_tokens / output_len over a ShareGPT answer's
// length.
func (rec *jsonlRecord) outputLen(p *Prompt) error {
	v, field := rec.MaxTokens, "max_tokens"
	if v == nil {
		v, field = rec.OutputLen, "output_len"
	} else if rec.OutputLen != nil && *rec.OutputLen != *v {
		return fmt.Errorf(`"max_tokens" %d and "output_len" %d differ: give one`, *v, *rec.OutputLen)
	}
	if v == nil {
		return nil
	}
	if *v < 1 || *v > MaxPromptTokens {
		return fmt.Errorf("%q %d is not between 1 and %d", field, *v, MaxPromptTokens)
	}
	p.MaxTokens = *v
	return nil
}

// kindName says what JSON a Go type of jsonlRecord takes.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int:
		return "a whole number"
	case reflect.Slice:
		return "a list"
	case reflect.Struct:
		return "an object"
	}
	return t.String()
}

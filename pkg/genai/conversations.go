package genai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxConversations bounds a data set of conversations (`--sessions
// RATE:@FILE`): sessions replay them in turn, so more would never be
// reached in any run this tool makes.
const MaxConversations = 1 << 20

// Conversations is a data set of multi-turn conversations: each one's user
// messages, in order. A session replays one (the server's own answers go
// between them), so the data set's answers are not kept.
type Conversations struct {
	users [][]string
}

// LoadConversations reads a data set of conversations: JSON Lines (blank
// lines skipped), or one JSON array (ShareGPT's own files), of objects in
// either layout:
//
//   - ShareGPT's {"conversations": [{"from": "human", "value": "..."},
//     {"from": "gpt", "value": "..."}, ...]}: the human (or user) turns;
//   - {"messages": [{"role": "user", "content": "..."}, ...]}: the user
//     messages.
//
// Each needs at least one non-empty user message. Errors wrap ErrData and
// name the file and the line (JSON Lines) or the array's element.
func LoadConversations(path string) (*Conversations, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	defer f.Close()
	return ReadConversations(f, path)
}

// ReadConversations is LoadConversations over r; name names it in errors.
func ReadConversations(r io.Reader, name string) (*Conversations, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(64)
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return readConversationArray(br, name)
	}
	c := &Conversations{}
	for line := 1; ; line++ {
		b, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s:%d: %w", ErrData, name, line, err)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			var rec conversationRecord
			if jerr := json.Unmarshal(b, &rec); jerr != nil {
				return nil, fmt.Errorf("%w: %s:%d: not a JSON object of a known layout: %w", ErrData, name, line, jerr)
			}
			if aerr := c.add(rec); aerr != nil {
				return nil, fmt.Errorf("%w: %s:%d: %w", ErrData, name, line, aerr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(c.users) == 0 {
		return nil, fmt.Errorf("%w: %s: no conversations", ErrData, name)
	}
	return c, nil
}

// readConversationArray reads a JSON array element by element.
func readConversationArray(r io.Reader, name string) (*Conversations, error) {
	d := json.NewDecoder(r)
	if _, err := d.Token(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrData, name, err)
	}
	c := &Conversations{}
	for i := 0; d.More(); i++ {
		var rec conversationRecord
		if err := d.Decode(&rec); err != nil {
			return nil, fmt.Errorf("%w: %s: element %d: not a JSON object of a known layout: %w", ErrData, name, i, err)
		}
		if err := c.add(rec); err != nil {
			return nil, fmt.Errorf("%w: %s: element %d: %w", ErrData, name, i, err)
		}
	}
	if _, err := d.Token(); err != nil {
		return nil, fmt.Errorf("%w: %s: the array does not end: %w", ErrData, name, err)
	}
	if len(c.users) == 0 {
		return nil, fmt.Errorf("%w: %s: no conversations", ErrData, name)
	}
	return c, nil
}

type conversationRecord struct {
	Conversations []shareGPTTurn `json:"conversations"`
	Messages      []Message      `json:"messages"`
}

// add keeps rec's user messages.
func (c *Conversations) add(rec conversationRecord) error {
	if len(c.users) >= MaxConversations {
		return fmt.Errorf("more than %d conversations", MaxConversations)
	}
	if (rec.Conversations != nil) == (rec.Messages != nil) {
		return errors.New(`want exactly one of "conversations" and "messages"`)
	}
	var users []string
	for _, t := range rec.Conversations {
		if isFrom(t.From, "human", "user") {
			users = append(users, t.Value)
		}
	}
	for _, m := range rec.Messages {
		if isFrom(m.Role, "user") {
			users = append(users, m.Content)
		}
	}
	if len(users) == 0 {
		return errors.New("no user turn")
	}
	for i, u := range users {
		if CountTokens(u) == 0 {
			return fmt.Errorf("user turn %d is empty", i+1)
		}
	}
	c.users = append(c.users, users)
	return nil
}

// Len is the number of conversations.
func (c *Conversations) Len() int { return len(c.users) }

// Turns is each conversation's user turns.
func (c *Conversations) Turns() []int {
	out := make([]int, len(c.users))
	for i, u := range c.users {
		out[i] = len(u)
	}
	return out
}

// UserTurn is session's user message at turn (1-based): session s replays
// conversation s mod Len. False past the conversation's turns.
func (c *Conversations) UserTurn(session, turn int) (string, bool) {
	u := c.users[session%len(c.users)]
	if turn < 1 || turn > len(u) {
		return "", false
	}
	return u[turn-1], true
}

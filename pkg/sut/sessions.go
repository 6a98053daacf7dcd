package sut

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// MaxSessionHistoryBytes bounds one session's history (its messages'
// text): a turn whose prompt would pass it fails, ending the session,
// rather than the conversation being cut without anyone knowing.
const MaxSessionHistoryBytes = 4 << 20

// ErrSessionHistory is a session turn that could not be built: its
// history is over MaxSessionHistoryBytes, or it has no user message.
var ErrSessionHistory = errors.New("sut: session history")

// UserTurns gives a session's user messages from a data set of
// conversations (genai.Conversations); without one, a turn's user message
// is the prompt of the QSL sample the engine drew for it.
type UserTurns interface {
	UserTurn(session, turn int) (string, bool)
}

// sessionBook is the Generative SUT's sessions in flight: each one's
// messages so far, the server's actual answers among them. A session's
// history goes at its last turn's answer or its first failure, so memory
// follows the sessions in flight.
type sessionBook struct {
	users UserTurns // nil: the QSL sample's prompt
	mu    sync.Mutex
	hist  map[int]*history
}

type history struct {
	msgs  []genai.Message
	bytes int
}

func newSessionBook(users UserTurns) *sessionBook {
	return &sessionBook{users: users, hist: map[int]*history{}}
}

// prompt is turn q.Turn of session q.Session: the history, then the user
// message (the data set's, else p's), which joins the history. Its
// max_tokens is p's.
func (b *sessionBook) prompt(q loadgen.Query, p *genai.Prompt) (*genai.Prompt, error) {
	user, err := b.userMessage(q, p)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.hist[q.Session]
	switch {
	case q.Turn == 1:
		h = &history{}
		b.hist[q.Session] = h
	case h == nil:
		return nil, fmt.Errorf("%w: session %d has no history for turn %d (the answer before it was over %d bytes with its history)", ErrSessionHistory, q.Session, q.Turn, MaxSessionHistoryBytes)
	}
	if h.bytes+len(user) > MaxSessionHistoryBytes {
		delete(b.hist, q.Session)
		return nil, fmt.Errorf("%w: session %d's turn %d would send %d bytes of history, over %d", ErrSessionHistory, q.Session, q.Turn, h.bytes+len(user), MaxSessionHistoryBytes)
	}
	h.msgs = append(h.msgs, genai.Message{Role: "user", Content: user})
	h.bytes += len(user)
	// Clipped: the history's later appends never show in this request.
	msgs := h.msgs[:len(h.msgs):len(h.msgs)]
	n := 0
	for _, m := range msgs {
		n += genai.CountTokens(m.Content)
	}
	return &genai.Prompt{Messages: msgs, InputTokens: n, MaxTokens: p.MaxTokens}, nil
}

func (b *sessionBook) userMessage(q loadgen.Query, p *genai.Prompt) (string, error) {
	if b.users != nil {
		u, ok := b.users.UserTurn(q.Session, q.Turn)
		if !ok {
			return "", fmt.Errorf("%w: session %d has no user message for turn %d", ErrSessionHistory, q.Session, q.Turn)
		}
		return u, nil
	}
	if p.Text != "" {
		return p.Text, nil
	}
	// A chat sample: its messages' contents, as a completions API joins
	// them.
	var s string
	for i, m := range p.Messages {
		if i > 0 {
			s += "\n"
		}
		s += m.Content
	}
	return s, nil
}

// answered ends turn turn of session: the answer joins the history, or,
// at the last turn or a failure, the session's history goes.
func (b *sessionBook) answered(session, turn, turns int, answer []byte, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := b.hist[session]
	if h == nil {
		return
	}
	if err != nil || turn >= turns || h.bytes+len(answer) > MaxSessionHistoryBytes {
		// Over the bound: the next turn could not carry it; it fails
		// when it finds no history.
		delete(b.hist, session)
		return
	}
	h.msgs = append(h.msgs, genai.Message{Role: "assistant", Content: string(answer)})
	h.bytes += len(answer)
}

// active is the sessions whose history is held.
func (b *sessionBook) active() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.hist)
}

// sessionTurn readies sample s for session turn q and returns its prompt;
// nil when the turn cannot be built (s has ended it, failed).
func (g *Generative) sessionTurn(s *genSample, q loadgen.Query, p *genai.Prompt) *genai.Prompt {
	sp, err := g.sessions.prompt(q, p)
	if err != nil {
		s.End(time.Time{}, genai.Usage{}, err)
		return nil
	}
	return sp
}

package mlperflog

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// AccuracyLog writes mlperf_log_accuracy.json as LoadGen does (logging.cc
// LogAccuracy; LOADGEN-REFERENCE.md §6.3): "[", then one entry per logged
// response, each
//
//	\n{ "seq_id" : S, "qsl_idx" : I, "data" : "HEX" }
//
// with a "," before every entry but the first, and "\n]\n" at Close (an
// empty log is "[\n]\n"). data is the response bytes in upper-case hex.
// Entries are written in the order Add is called (LoadGen: completion
// order). Safe for concurrent use: completions may Add while a run goes.
// Output is buffered; Close flushes it. The first write error is kept and
// returned by every later call.
type AccuracyLog struct {
	tokens AccuracyTokens
	mu     sync.Mutex
	w      *bufio.Writer
	n      int
	closed bool
	err    error
	buf    []byte
}

// AccuracyTokens is what LoadGen adds to each entry of a run with
// use_token_latencies (logging.cc LogAccuracy): the response's token count,
// and outside Offline (needs_first_token) the first token's response bytes
// before it.
type AccuracyTokens int

const (
	// NoTokens: seq_id, qsl_idx, data.
	NoTokens AccuracyTokens = iota
	// TokenCount adds "token_count" : N (Offline).
	TokenCount
	// TokenDataAndCount adds "token_data" : "HEX", "token_count" : N
	// (SingleStream, MultiStream, Server).
	TokenDataAndCount
)

// AccuracyTokensFor is LoadGen's choice: no token fields without
// use_token_latencies; Offline has no first token to log.
func AccuracyTokensFor(useTokenLatencies, offline bool) AccuracyTokens {
	switch {
	case !useTokenLatencies:
		return NoTokens
	case offline:
		return TokenCount
	}
	return TokenDataAndCount
}

// NewAccuracyLog starts an accuracy log on w, writing its opening "[".
func NewAccuracyLog(w io.Writer) (*AccuracyLog, error) {
	return NewAccuracyLogTokens(w, NoTokens)
}

// NewAccuracyLogTokens starts an accuracy log whose entries carry the
// token fields of mode (AddTokens gives them).
func NewAccuracyLogTokens(w io.Writer, mode AccuracyTokens) (*AccuracyLog, error) {
	a := &AccuracyLog{w: bufio.NewWriterSize(w, 64<<10), tokens: mode}
	if _, err := a.w.WriteString("["); err != nil {
		return nil, fmt.Errorf("write accuracy log: %w", err)
	}
	return a, nil
}

// Add logs one response: the sample's sequence id (its issue order in the
// run), its QSL index and the response bytes (no token fields: a log of
// NewAccuracyLogTokens writes token_count 0 and empty token_data).
func (a *AccuracyLog) Add(seqID uint64, qslIdx uint64, data []byte) error {
	return a.AddTokens(seqID, qslIdx, data, nil, 0)
}

// AddTokens logs one response with its first token's response bytes and
// its token count, written as the log's AccuracyTokens mode says, in
// LoadGen's order: ..., "data" : "HEX", "token_data" : "HEX",
// "token_count" : N }.
func (a *AccuracyLog) AddTokens(seqID uint64, qslIdx uint64, data, tokenData []byte, tokenCount int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	if a.closed {
		return ErrClosed
	}
	b := a.buf[:0]
	if a.n > 0 {
		b = append(b, ',')
	}
	b = append(b, "\n{ \"seq_id\" : "...)
	b = strconv.AppendUint(b, seqID, 10)
	b = append(b, ", \"qsl_idx\" : "...)
	b = strconv.AppendUint(b, qslIdx, 10)
	b = append(b, ", \"data\" : \""...)
	b = appendUpperHex(b, data)
	b = append(b, '"')
	if a.tokens == TokenDataAndCount {
		b = append(b, ", \"token_data\" : \""...)
		b = appendUpperHex(b, tokenData)
		b = append(b, '"')
	}
	if a.tokens != NoTokens {
		b = append(b, ", \"token_count\" : "...)
		b = strconv.AppendInt(b, tokenCount, 10)
	}
	b = append(b, " }"...)
	a.buf = b
	if _, err := a.w.Write(b); err != nil {
		a.err = fmt.Errorf("write accuracy log: %w", err)
		return a.err
	}
	a.n++
	return nil
}

// Len returns how many entries were added.
func (a *AccuracyLog) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// Flush writes buffered entries to the underlying writer; the array stays
// open.
func (a *AccuracyLog) Flush() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	if err := a.w.Flush(); err != nil {
		a.err = fmt.Errorf("write accuracy log: %w", err)
	}
	return a.err
}

// Close ends the array and flushes. Later Adds fail with ErrClosed; a second
// Close does nothing. It does not close the underlying writer.
func (a *AccuracyLog) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil || a.closed {
		return a.err
	}
	a.closed = true
	if _, err := a.w.WriteString("\n]\n"); err != nil {
		a.err = fmt.Errorf("write accuracy log: %w", err)
		return a.err
	}
	if err := a.w.Flush(); err != nil {
		a.err = fmt.Errorf("write accuracy log: %w", err)
	}
	return a.err
}

// appendUpperHex writes data as upper-case hex, as LoadGen's
// LogBinaryAsHexString does (encoding/hex writes lower case).
func appendUpperHex(b, data []byte) []byte {
	const digits = "0123456789ABCDEF"
	for _, c := range data {
		b = append(b, digits[c>>4], digits[c&0xf])
	}
	return b
}

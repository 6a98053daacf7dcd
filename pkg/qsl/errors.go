package qsl

import (
	"errors"
	"fmt"
	"strings"
)

// The kinds of bad sample data, for errors.Is.
var (
	ErrFormat       = errors.New("invalid sample data")
	ErrNoSamples    = errors.New("no samples")
	ErrTruncated    = errors.New("truncated")
	ErrShape        = errors.New("shape mismatch")
	ErrDatatype     = errors.New("datatype mismatch")
	ErrMissingInput = errors.New("missing input")
	ErrUnknownInput = errors.New("not an input of the model")
	ErrCount        = errors.New("sample counts differ")
)

// DataError is bad sample data: where it is (file, JSON entry, input) and
// what is wrong. A run stops on one before it sends anything.
type DataError struct {
	Path  string
	Entry int // index in a JSON file's data array; -1 when not JSON
	Input string
	Err   error
}

func (e *DataError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Entry >= 0 {
		fmt.Fprintf(&b, ": entry %d", e.Entry)
	}
	if e.Input != "" {
		fmt.Fprintf(&b, ": input %q", e.Input)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *DataError) Unwrap() error { return e.Err }

// dataErr builds a DataError outside JSON; kind is one of the Err values.
func dataErr(path, input string, kind error, format string, args ...any) *DataError {
	return &DataError{Path: path, Entry: -1, Input: input, Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}
}

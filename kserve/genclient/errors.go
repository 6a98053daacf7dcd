package genclient

import (
	"fmt"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/pkg/genai"
)

// streamErrorf is a malformed stream: it matches both genai.ErrStream and
// kserve.ErrMalformed, so pkg/outcome names the sample's outcome
// "malformed".
func streamErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", genai.ErrStream, kserve.ErrMalformed, fmt.Sprintf(format, args...))
}

// noOutputTokens is an answer with no token-bearing response: it matches
// genai.ErrNoOutputTokens and kserve.ErrMalformed (outcome "malformed").
func noOutputTokens(why string) error {
	return fmt.Errorf("%w: %w (%s)", genai.ErrNoOutputTokens, kserve.ErrMalformed, why)
}

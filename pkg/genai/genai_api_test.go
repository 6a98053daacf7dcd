package genai

import (
	"errors"
	"testing"
)

func TestParseAPI(t *testing.T) {
	for _, a := range APIs() {
		if got, err := ParseAPI(string(a)); err != nil || got != a {
			t.Errorf("ParseAPI(%q) = %q, %v", a, got, err)
		}
	}
	if got, err := ParseAPI(""); err != nil || got != "" {
		t.Errorf("ParseAPI(\"\") = %q, %v: want the probe's choice", got, err)
	}
	if _, err := ParseAPI("openai"); !errors.Is(err, ErrAPI) {
		t.Errorf("ParseAPI(openai): %v, want ErrAPI", err)
	}
}

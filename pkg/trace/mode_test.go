package trace

import (
	"encoding/json"
	"errors"
	"testing"
)

// The names are LoadGen's, written into logs, results and run specs: they
// must not drift.
func TestModeNames(t *testing.T) {
	for m, want := range map[Mode]string{
		SubmissionRun: "SubmissionRun", AccuracyOnly: "AccuracyOnly",
		PerformanceOnly: "PerformanceOnly", FindPeakPerformance: "FindPeakPerformance",
	} {
		if got := m.String(); got != want {
			t.Errorf("Mode(%d).String() = %q, want %q", int(m), got, want)
		}
		b, err := json.Marshal(m)
		if err != nil || string(b) != `"`+want+`"` {
			t.Errorf("json.Marshal(%v) = %s, %v", m, b, err)
		}
		var back Mode
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Errorf("json.Unmarshal(%s) = %v, %v; want %v", b, back, err, m)
		}
	}
	if got := Mode(4).String(); got != "Mode(4)" {
		t.Errorf("Mode(4).String() = %q", got)
	}
	if _, err := json.Marshal(Mode(-1)); !errors.Is(err, ErrInvalidSettings) {
		t.Errorf("json.Marshal(Mode(-1)): %v, want ErrInvalidSettings", err)
	}
	var m Mode
	if err := json.Unmarshal([]byte(`"performance"`), &m); !errors.Is(err, ErrInvalidSettings) {
		t.Errorf("json.Unmarshal of an unknown name: %v, want ErrInvalidSettings", err)
	}
}

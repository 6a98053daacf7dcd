package trace

import "fmt"

// Mode is LoadGen's TestMode (test_settings.h), numbered as the config key
// "mode" is. It lives here, beside Scenario, because pkg/loadgen (which
// runs it) and pkg/mlperflog (which logs it) both build on this package.
type Mode int

// LoadGen's test modes, in its enum order (the mlperf.conf "mode" values).
const (
	SubmissionRun       Mode = 0
	AccuracyOnly        Mode = 1
	PerformanceOnly     Mode = 2
	FindPeakPerformance Mode = 3
)

var modeNames = [...]string{"SubmissionRun", "AccuracyOnly", "PerformanceOnly", "FindPeakPerformance"}

// Valid reports whether m is one of LoadGen's four modes.
func (m Mode) Valid() bool { return m >= 0 && int(m) < len(modeNames) }

// String returns the name LoadGen writes for the mode ("Mode     : " in the
// summary, effective_test_mode in the detail log).
func (m Mode) String() string {
	if !m.Valid() {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// MarshalText writes the mode by name, so run specs and results read well.
func (m Mode) MarshalText() ([]byte, error) {
	if !m.Valid() {
		return nil, fmt.Errorf("%w: mode %d", ErrInvalidSettings, int(m))
	}
	return []byte(modeNames[m]), nil
}

// UnmarshalText accepts LoadGen's mode names.
func (m *Mode) UnmarshalText(b []byte) error {
	for i, n := range modeNames {
		if n == string(b) {
			*m = Mode(i)
			return nil
		}
	}
	return fmt.Errorf("%w: mode: unknown %q (want one of %v)", ErrInvalidSettings, b, modeNames)
}

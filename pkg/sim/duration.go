package sim

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration written in specs as a Go duration string
// ("2ms", "150us"). Bare numbers are refused: a spec that says 2 could mean
// seconds, milliseconds or nanoseconds, and guessing wrong by 10^6 is silent.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d as Go does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration %s must be a string such as \"2ms\" or \"150us\"", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

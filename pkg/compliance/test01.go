package compliance

import (
	"bytes"
	"fmt"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// Test01Check compares the responses a performance run logged with the
// accuracy run's, sample by sample (TEST01's verify_accuracy: qsl_idx →
// data must match exactly).
type Test01Check struct {
	Logged     int `json:"logged"`
	Compared   int `json:"compared"`
	Mismatched int `json:"mismatched"`
	// Missing counts logged samples the accuracy run has no response for.
	Missing int `json:"missing"`
	// Examples are the first few mismatches.
	Examples []string `json:"examples,omitempty"`
}

// Pass: at least one response logged, every one found and equal.
func (c Test01Check) Pass() bool { return c.Logged > 0 && c.Mismatched == 0 && c.Missing == 0 }

// CheckTest01 compares perf (the performance run's sampled log) with acc
// (the accuracy run's entries).
func CheckTest01(perf, acc []loadgen.AccuracyEntry) Test01Check {
	byIndex := make(map[int][]byte, len(acc))
	for _, e := range acc {
		if _, ok := byIndex[e.QSLIndex]; !ok {
			byIndex[e.QSLIndex] = e.Data
		}
	}
	c := Test01Check{Logged: len(perf)}
	for _, e := range perf {
		want, ok := byIndex[e.QSLIndex]
		if !ok {
			c.Missing++
			continue
		}
		c.Compared++
		if !bytes.Equal(e.Data, want) {
			c.Mismatched++
			if len(c.Examples) < 5 {
				c.Examples = append(c.Examples, fmt.Sprintf("seq_id %d qsl_idx %d: %d bytes differ from the accuracy run's %d", e.SeqID, e.QSLIndex, len(e.Data), len(want)))
			}
		}
	}
	return c
}

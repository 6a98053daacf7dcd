package mlperflog

import (
	"errors"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/stats"
)

// LoadGen's percentile is sorted[size_t(n·p)] (results.cc); with the latencies
// 1…1000 ns, rank r holds r+1.
func TestNewLatencyStats(t *testing.T) {
	ds := make([]time.Duration, 1000)
	for i := range ds {
		ds[len(ds)-1-i] = time.Duration(i + 1) // unsorted input
	}
	l, err := stats.NewLatencies(ds)
	must(t, err)
	got, err := NewLatencyStats(l)
	must(t, err)
	want := LatencyStats{Min: 1, Max: 1000, Mean: 500, P: [6]time.Duration{501, 901, 951, 971, 991, 1000}}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := NewLatencyStats(stats.Latencies{}); !errors.Is(err, stats.ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
}

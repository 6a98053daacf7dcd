package mlperflog

import (
	"io"
	"testing"
)

// BenchmarkAccuracyLogAdd measures one logged response of 4 KiB (a typical
// classification output is far smaller), the cost on the completion path.
func BenchmarkAccuracyLogAdd(b *testing.B) {
	a, err := NewAccuracyLog(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 4096)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := a.Add(uint64(i), uint64(i%1024), data); err != nil {
			b.Fatal(err)
		}
	}
}

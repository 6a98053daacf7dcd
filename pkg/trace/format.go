package trace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// FormatQPS prints a double the way a default C++ ostream does (precision
// 6, %g): 1000, 0.5, 12345.6, 1e+06.
func FormatQPS(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// PrintedSamplesPerQuery is how many QSL indices a query line lists at
// most. The reference tool stops there: its Offline vector has a 24576-sample
// query whose line holds the first 16 indices (FORMAT.md says every sample,
// the file says 16; the file is what the C++ side prints).
const PrintedSamplesPerQuery = 16

// Write prints the trace in the LoadGen reference-vector format
// (testdata/loadgen/FORMAT.md): four "# " header lines with the effective
// settings, the generated counts and the loaded set, then one line per
// query: index, scheduled offset in ns, sample count, and the first
// PrintedSamplesPerQuery QSL indices.
func Write(w io.Writer, t *Trace) error { return WriteSamples(w, t, PrintedSamplesPerQuery) }

// WriteSamples is Write listing at most maxSamples QSL indices a query; 0
// lists them all (an Offline trace whole).
func WriteSamples(w io.Writer, t *Trace, maxSamples int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	e := t.Settings
	buf := make([]byte, 0, 256)
	buf = append(buf, "# target_qps "...)
	buf = append(buf, FormatQPS(e.TargetQPS)...)
	buf = append(buf, " samples_per_query "...)
	buf = strconv.AppendUint(buf, e.SamplesPerQuery, 10)
	buf = append(buf, " min_query_count "...)
	buf = strconv.AppendUint(buf, e.MinQueryCount, 10)
	buf = append(buf, " performance_sample_count "...)
	buf = strconv.AppendUint(buf, e.PerformanceSampleCount, 10)
	buf = append(buf, "\n# generated_query_count "...)
	buf = strconv.AppendInt(buf, int64(t.Len()), 10)
	buf = append(buf, " generated_query_duration "...)
	buf = strconv.AppendInt(buf, int64(t.Duration), 10)
	buf = append(buf, "\n# loaded_qsl_set"...)
	bw.Write(buf)
	for _, s := range t.LoadedSet {
		buf = append(buf[:0], ' ')
		buf = strconv.AppendInt(buf, int64(s), 10)
		bw.Write(buf)
	}
	bw.WriteString("\n# query_idx scheduled_delta_ns n_samples qsl_indices...\n")
	c := t.Cursor()
	defer c.Close() // a shaped pass may hold a trace file
	for q, ok := c.Next(); ok; q, ok = c.Next() {
		buf = strconv.AppendInt(buf[:0], int64(q.Index), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(q.Scheduled), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(len(q.Samples)), 10)
		bw.Write(buf)
		n := len(q.Samples)
		if maxSamples > 0 {
			n = min(n, maxSamples)
		}
		for _, s := range q.Samples[:n] {
			buf = append(buf[:0], ' ')
			buf = strconv.AppendInt(buf, int64(s), 10)
			bw.Write(buf)
		}
		bw.WriteByte('\n')
	}
	if err := c.Err(); err != nil {
		// A shaped pass that ended early: not a shorter schedule.
		_ = bw.Flush()
		return fmt.Errorf("trace: the load shape's pass ended early, the schedule printed is cut: %w", err)
	}
	return bw.Flush()
}

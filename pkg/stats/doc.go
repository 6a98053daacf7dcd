// Package stats turns measured latencies into the numbers an MLPerf run is
// judged by: an exact per-sample latency record, LoadGen's percentiles, HDR
// histograms for live views and .hlog files, early stopping and the
// minimum-query statistics.
//
// Conventions: latencies are nanoseconds (time.Duration); a percentile p is a
// fraction in [0, 1] (0.99, not 99); a failed sample counts as over every
// latency bound and sorts above every real latency (FailedLatency).
//
// Memory: a run's LatencyRecord is 8 bytes a sample, off the Go heap
// (pkg/offheap), plus a 24-byte index entry per 32,768 samples on it; it is
// the only thing here that grows with a run. Its statistics (Latencies) are
// read from it in place, never from a sorted copy: a 58 KiB histogram, then
// at most ~4 MiB a scan (scan.go) whatever the run's length.
package stats

// Package stats turns measured latencies into the numbers an MLPerf run is
// judged by: an exact per-sample latency record, LoadGen's percentiles, HDR
// histograms for live views and .hlog files, early stopping and the
// minimum-query statistics.
//
// Conventions: latencies are nanoseconds (time.Duration); a percentile p is a
// fraction in [0, 1] (0.99, not 99); a failed sample counts as over every
// latency bound and sorts above every real latency (FailedLatency).
package stats

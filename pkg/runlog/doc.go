// Package runlog writes a finished run's files into its directory: the
// LoadGen logs (mlperf_log_summary.txt, mlperf_log_detail.txt,
// mlperf_log_accuracy.json), netloadgen's result.json, the sample latencies
// as an HdrHistogram interval log (latency.hlog), the per-second time series
// (timeseries.csv, timeseries.json) and the exact latency percentile
// spectrum (latency_spectrum.txt), each file atomically; and it reads
// result.json back and renders a one-paragraph summary for a terminal.
//
// The verdict is the engine's: the LoadGen summary is built from the
// loadgen.Result so that its "Result is" line always agrees with
// result.json. Sample latencies come from the run's exact per-sample record;
// query latencies and issue lateness, which the engine does not expose as
// records, are taken from the Result's exact tables (the same LoadGen
// percentile rule, so nothing is approximated).
package runlog

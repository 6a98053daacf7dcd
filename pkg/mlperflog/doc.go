// Package mlperflog writes a run's results as the MLPerf LoadGen log files
// the official submission and compliance tools read: mlperf_log_summary.txt
// (WriteSummary), mlperf_log_detail.txt (DetailLog, ":::MLLOG" JSON lines)
// and mlperf_log_accuracy.json (AccuracyLog), in LoadGen 6.0.17's layout
// (design/LOADGEN-REFERENCE.md §6).
//
// The detail log's helpers (DetailLog.LogVersion … LogResults) write
// LoadGen's keys in LoadGen's order, group by group; the caller calls them in
// the order LoadGen's StartTest and RunPerformanceMode (or RunAccuracyMode)
// would (pkg/runlog does). LoadGen's logger contention counters
// (LogLoggerCounters) are always 0: this writer never retries.
//
// It only formats: every value, timestamp and verdict comes from the caller,
// so the output for a given input is fixed. Where netloadgen knows more than
// LoadGen (failed network samples, issue lateness, the ruleset), it adds
// lines that are labelled as its own and placed where the official tools'
// parsers do not look: after LoadGen's summary, and as "netloadgen_" keys
// after LoadGen's result keys in the detail log.
//
// Departures from LoadGen, all to keep the files machine-readable:
//   - Detail-log strings are JSON-escaped (LoadGen writes most of them raw,
//     which breaks strict JSON on a quote or a newline).
//   - A non-finite double is written as a JSON string ("nan", "inf", "-inf",
//     the text LoadGen's ostream would print), never as a bare token:
//     the checker's float() still reads it, and json.loads does not fail.
//   - In summary text coming from outside (the SUT's name, error messages,
//     extra fields) control characters become spaces and "Early stopping"
//     becomes "Early-stopping", so a remote server cannot forge a line or a
//     score the TEST04 script would read.
package mlperflog

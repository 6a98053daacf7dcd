// Package compliance runs MLPerf's audit tests against a SUT and judges
// them (design/MLPERF.md "Accuracy and compliance", LOADGEN-REFERENCE.md
// §7): each test runs the pair of runs it needs through a Runner and
// compares them.
//
//   - TEST01: an accuracy run, then a performance run that logs a sample of
//     its responses (accuracy_log_sampling_target, accuracy_log_rng_seed);
//     every logged response must equal the accuracy run's for the sample.
//   - TEST04: the normal performance run, then one where every sample is
//     loaded-set position 3 (performance_issue_same); the latter must not
//     be more than 10% faster.
//   - TEST05: the normal run, then one with the alternate seeds (test05);
//     performance must agree within 5% (20% when the latency is ≤ 0.2 ms).
//   - caching (the papers' check): unique sample indices (every loaded
//     sample once, performance_issue_unique) versus the same number of
//     samples drawn from a set DuplicateFactor times smaller; duplicates must
//     not run more than Threshold (default 10%) faster.
//
// A test never passes when a performance run it depends on is not VALID:
// the verdict is FAIL and names the run and the criteria it missed.
//
// An audit.config in LoadGen's syntax, applied last (conf_type 2, model
// "*"), adjusts the audited run's settings.
//
// The speed figure compared is, per scenario, Offline's samples per second
// and otherwise the mean latency (per sample; per query for MultiStream).
// LoadGen's own scripts compare the headline tail percentile, which in the
// short runs an audit is usually run for is set by the few cache misses
// and would hide a cache; the mean is not.
package compliance

// Package metrics exports loadgend's live state to Prometheus: what the
// engine issues and completes (through a loadgen.Observer), the latency and
// issue-lateness histograms, the target and achieved rates, the state of the
// active run and a peak search's progress.
//
// Counters and histograms live as long as the process and add up across
// runs, as Prometheus expects (rate() and increase() handle them). The
// target, in-flight and search gauges describe the active run and are zero
// without one; loadgend_run_state keeps showing the last run's final state
// until the next one starts. Labels come from fixed sets (outcome, code, state),
// so the series count does not grow with runs: the run id, scenario, model
// and target appear only on loadgend_run_info, and only while the run is
// active.
//
// Failed samples are counted by outcome (loadgend_samples_failed_total) and
// by the status the server answered with (loadgend_samples_failed_by_code_total:
// http_100 … http_599, http_other, grpc_ok … grpc_unauthenticated,
// grpc_other, "" for none; pkg/outcome's fixed set of 520, each series made at
// its first failure), and kept out of the latency histogram, whose count
// therefore equals the result's SamplesCompleted.
//
// Completion rate in PromQL: rate(loadgend_samples_completed_total[5s]).
// loadgend_achieved_samples_per_second is the same figure computed in
// process at scrape time, for dashboards without PromQL.
//
// The latency and lateness histograms are native histograms (schema 4,
// bucket factor ≤ 1.05) with classic buckets from 100 µs (lateness: 10 µs)
// to 60 s as well; a Prometheus server ingests the native form only when
// scraping protobuf with native histograms enabled.
package metrics

// Package loadgen runs one MLPerf LoadGen performance test against a system
// under test it knows only through the SUT and QSL interfaces: it turns
// TestSettings into LoadGen's trace (counted before the clock, generated as
// it is issued), issues the trace's queries by scenario, records every
// completion exactly, and judges the run's validity
// (design/MLPERF.md, design/LOADGEN-REFERENCE.md §1-§5). It knows nothing of
// HTTP or gRPC and writes no files: the Result it returns carries everything
// the logs need (RESULT.md documents its JSON form).
//
// A trace can be issued in shards (shard k of N: the queries i with
// i mod N = k): by N issuers in one process (Settings.Engine.Issuers,
// WithIssuerSUTs), or one shard a process, the workers of a distributed
// run (WithShard, WithStartAt, WithRecordSink); docs/ARCHITECTURE.md says
// how.
package loadgen

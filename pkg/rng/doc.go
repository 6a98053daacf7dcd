// Package rng reproduces, bit for bit, the random number engine and the
// libstdc++ (GCC 11/12) distribution algorithms that the MLPerf LoadGen uses
// to build its traces: std::mt19937, std::uniform_int_distribution,
// std::shuffle, std::generate_canonical<double,53>,
// std::exponential_distribution (with glibc's log) and the truncating
// std::chrono::duration_cast to nanoseconds.
//
// The C++ standard leaves the distributions implementation-defined, so Go's
// math/rand cannot stand in for them: only these exact algorithms give the
// sample indices and schedules LoadGen 6.0.17 gives for the same seeds.
package rng

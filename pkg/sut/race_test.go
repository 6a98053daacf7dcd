//go:build race

package sut

// raceEnabled: under the race detector sync.Pool drops items at random,
// so counts of allocations mean nothing.
const raceEnabled = true

//go:build race

package grpcloop

// raceEnabled: under the race detector allocation counts mean nothing (it
// allocates for its own bookkeeping, and sync.Pool drops items at random).
const raceEnabled = true

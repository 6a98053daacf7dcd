//go:build race

package httploop

// raceEnabled: under the race detector sync.Pool drops items at random
// (crypto/tls's record buffers are pooled), so counts of allocations mean
// nothing.
const raceEnabled = true

//go:build !race

package grpcloop

const raceEnabled = false

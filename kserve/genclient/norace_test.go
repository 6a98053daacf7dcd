//go:build !race

package genclient

const raceEnabled = false

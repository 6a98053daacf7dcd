//go:build !race

package sut

const raceEnabled = false

//go:build !race

package httploop

const raceEnabled = false

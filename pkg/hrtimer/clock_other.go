//go:build !linux

package hrtimer

func newClockSource() (clockSource, error) { return nil, nil }

func prepareThread() {}

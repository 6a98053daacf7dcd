//go:build !linux

package testtool

// RxTimestampsOn does nothing where there are no receive timestamps.
func RxTimestampsOn() (stop func()) { return func() {} }

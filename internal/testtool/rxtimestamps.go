package testtool

import "testing"

// RunWithRxTimestamps runs a test binary's tests with receive timestamps
// on (RxTimestampsOn) and returns the exit code: a package whose tests time
// answers by their arrival has TestMain call
// os.Exit(testtool.RunWithRxTimestamps(m)).
func RunWithRxTimestamps(m *testing.M) int {
	stop := RxTimestampsOn()
	defer stop()
	return m.Run()
}

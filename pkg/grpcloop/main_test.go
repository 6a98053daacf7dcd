package grpcloop

import (
	"os"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testtool"
)

// Receive timestamps on before any test: tests of arrival times must not
// depend on whether the kernel's deferred enabling has run yet. With
// genBenchServerEnv set the binary is BenchmarkGenerateClientOnly's server.
func TestMain(m *testing.M) {
	if os.Getenv(genBenchServerEnv) != "" {
		os.Exit(serveGenBench())
	}
	os.Exit(testtool.RunWithRxTimestamps(m))
}

package genclient

import (
	"os"
	"testing"

	"github.com/netloadgen/netloadgen/internal/testtool"
)

// Receive timestamps on before any test: tests of arrival times must not
// depend on whether the kernel's deferred enabling has run yet.
func TestMain(m *testing.M) { os.Exit(testtool.RunWithRxTimestamps(m)) }

//go:build !unix

package grpcloop

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }

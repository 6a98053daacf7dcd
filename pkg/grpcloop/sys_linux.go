//go:build linux

package grpcloop

import "github.com/netloadgen/netloadgen/internal/rawio"

// The loop's hot system calls are raw (internal/rawio says why); a wait is
// raw only up to rawWaitLimit, a longer one parks on Go's poller (wait).
const rawWaitLimit = int64(rawio.WaitLimit)

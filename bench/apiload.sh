#!/bin/sh
# The control API must not slow a run (issue 17 #5): runs of 1,000 QPS
# Server by loadgend (its own process, over 500 finished runs) alternate
# without and with 2,000 GET /v1/runs?limit=500 from 50 clients; each run's
# issue lateness p99 is a FIGURE line, and the test fails when the median
# with load is 1 ms or more above the median without. sutproxy and the
# clients run in the test process, all on 127.0.0.1. About 3 minutes.
# NETLOADGEN_API_BENCH_PAIRS (3) and NETLOADGEN_API_BENCH_SECONDS (15) size it.
set -eu
cd "$(dirname "$0")/.."
NETLOADGEN_API_BENCH=1 go test -count=1 -v -timeout 30m -run 'TestAPILoadDuringARun' ./pkg/daemon/ 2>&1 |
	tee "${BENCH_OUT:-/tmp/apiload-bench.txt}" | grep -E 'FIGURE|^(---|===|ok|FAIL|PASS)'

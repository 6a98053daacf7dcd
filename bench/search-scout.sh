#!/bin/sh
# Issue 33's benchmark: the scout strategy against the full search, one
# after the other for each model of known capacity (M/D/1 and M/D/4 over
# HTTP and gRPC, the simulated LLM under TTFT/TPOT bounds over SSE and
# gRPC streaming), sutproxy in process on 127.0.0.1. Each row passes when
# scout's peak is within the precision (2% of the truth) of full's, in at
# most a third of its wall time. Trials are NLG_SCOUT_MIN_MS long (default
# 10000, so a scout trial is about 1 s); the whole script takes about 15
# minutes. Run it on an idle machine: a stall of tens of ms fails a p99.
set -eu
cd "$(dirname "$0")/.."
NETLOADGEN_SEARCH_BENCH=1 go test -count=1 -v -timeout 60m \
	-run 'TestScoutFindsTheFullPeakInAThird' \
	./pkg/runner/ 2>&1 | tee "${BENCH_OUT:-/tmp/search-scout-bench.txt}" | grep -E 'FIGURE|^(---|===|ok|FAIL|PASS)|    --- '

#!/bin/sh
# Peak search benchmarks (issue 5's acceptance), against sutproxy models in
# process on 127.0.0.1:
#   - Server peak within 5% of an M/G/c simulation's truth, HTTP and gRPC
#   - v0.5 MultiStream finds the true max stream count or one below
#   - early verdicts: at most half the time, same answer
#   - token-latency peak (TTFT/TPOT bounds) within 5% of sim.LLMTruth's, HTTP and gRPC
# Trials are 3 s; the whole script takes a few minutes. Run it on an idle
# machine: a stall of a few tens of ms fails a trial's p99.
# NLG_HTTP_CLIENT=pool runs the HTTP cases on the pool client instead of the loop.
set -eu
cd "$(dirname "$0")/.."
NETLOADGEN_SEARCH_BENCH=1 go test -count=1 -v -timeout 30m \
	-run 'TestServerPeakWithinFivePercentOfTheTruth|TestMultiStreamFindsTheTrueMaximum|TestEarlyVerdictHalvesTheSearch|TestTokenPeakWithinFivePercentOfTheTruth' \
	./pkg/runner/ 2>&1 | tee "${BENCH_OUT:-/tmp/search-bench.txt}" | grep -E 'FIGURE|^(---|===|ok|FAIL|PASS)'

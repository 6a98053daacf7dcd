#!/bin/sh
# Issue 33's benchmark: the scout strategy against the full search, for
# each model of known capacity (M/D/4 and M/D/8 of 5 ms over HTTP and gRPC, the
# simulated LLM under TTFT/TPOT bounds over SSE and gRPC streaming),
# sutproxy in process on 127.0.0.1: a full search, a scout search, and a
# second full search (the control: how far two full searches land apart).
# A row passes when scout's peak is within the precision (2% of the truth)
# of the first full's, in at most a third of its wall time. The M/D trials
# are NLG_SCOUT_MIN_MS long (default 20000: a scout trial is about 2 s;
# NLG_SCOUT_TIGHT=1 adds the 1 ms and 2 ms models judged at 10 ms),
# the LLM's NLG_SCOUT_LLM_MIN_MS (default 30000). ROWS picks rows by name
# (a go test -run pattern under the test, default all); NLG_SCOUT_DURATION_MS
# is --scout-duration. About 30 minutes for the M/D/4 and LLM rows.
# Run it on an idle machine: a stall of tens of ms fails a p99.
set -eu
cd "$(dirname "$0")/.."
NETLOADGEN_SEARCH_BENCH=1 go test -count=1 -v -timeout 90m \
	-run "TestScoutFindsTheFullPeakInAThird/${ROWS:-}" \
	./pkg/runner/ 2>&1 | tee "${BENCH_OUT:-/tmp/search-scout-bench.txt}" | grep -E 'FIGURE|^(---|===|ok|FAIL|PASS)|    --- '

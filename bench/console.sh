#!/bin/sh
# The console's runs page over a history of 1,000 finished runs (issue 32):
# BenchmarkConsoleRunsPage seeds loadgend's data directory (one real Server
# run against sutproxy, 999 copies), opens /ui/ in headless Chromium
# (Debian's chromium) and times each load to main[data-ready] with the
# table drawn. ready-ms is navigation start to data-ready as the page saw
# it; ns/op adds the DevTools round trips. Target: under 1 s. About 30 s.
# NETLOADGEN_CONSOLE_BENCH_COUNT (5) sittings of NETLOADGEN_CONSOLE_BENCH_LOADS (20) loads.
set -eu
cd "$(dirname "$0")/.."
go test -count="${NETLOADGEN_CONSOLE_BENCH_COUNT:-5}" -run '^$' -bench '^BenchmarkConsoleRunsPage$' \
	-benchtime "${NETLOADGEN_CONSOLE_BENCH_LOADS:-20}x" -timeout 20m ./pkg/daemon/ 2>&1 |
	tee "${BENCH_OUT:-/tmp/console-bench.txt}" | grep -E '^(Benchmark|cpu|ok|FAIL|PASS)|console_bench'

#!/bin/sh
# Trace replay (issue 31's acceptance), two parts:
#   1. pkg/runner TestTraceReplay with NETLOADGEN_TRACE_REPLAY_BENCH=1: a
#      2,000-request Mooncake-format trace over the OpenAI API and a
#      2,000-row Azure-format CSV over gRPC ModelStreamInfer (2 s each,
#      1,000 requests a second) against sutproxy's simulated LLM in
#      process, each preceded by a plain Poisson run of the same rate and
#      lengths on the same path (the baseline, for a ratio on a shared
#      machine): issue lateness mean/p99/max, p99 held under 1 ms.
#   2. pkg/shape TestTraceMemory: a 10^6-line Mooncake trace (100 MiB)
#      checked, walked twice and replayed against a null SUT at 50,000
#      requests a second (20 s), then a plain Poisson run of the same count
#      and rate, each in its own process: max RSS (getrusage) of each.
# Takes about 2 minutes. Run it on an idle machine: the lateness is a
# timing claim.
set -eu
cd "$(dirname "$0")/.."
OUT=${BENCH_OUT:-/tmp/trace-replay-bench.txt}
echo "date: $(date -u +%FT%TZ)  machine: $(nproc) cores, $(uname -r)  load: $(cut -d' ' -f1-3 /proc/loadavg)  commit: $(git rev-parse --short HEAD)" | tee "$OUT"
NETLOADGEN_TRACE_REPLAY_BENCH=1 go test -count=1 -v -timeout 10m -run 'TestTraceReplay$' ./pkg/runner/ 2>&1 |
	tee -a "$OUT" | grep -E 'FIGURE|want under|^(--- |ok|FAIL)' | sed 's/^ *tracereplay_test.go:[0-9]*: //' || true
for mode in trace plain; do
	NETLOADGEN_TRACE_MEM_BENCH=$mode go test -count=1 -v -timeout 10m -run 'TestTraceMemory$' ./pkg/shape/ 2>&1 |
		tee -a "$OUT" | grep -E 'FIGURE|^(--- FAIL|FAIL)' | sed 's/^ *tracemem_test.go:[0-9]*: //'
done

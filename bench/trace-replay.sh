#!/bin/sh
# Trace replay (issue 31's acceptance), two parts:
#   1. pkg/runner TestTraceReplay with NETLOADGEN_TRACE_REPLAY_BENCH=1: a
#      2,000-request Mooncake-format trace over the OpenAI API and a
#      2,000-row Azure-format CSV over gRPC ModelStreamInfer (2 s each,
#      1,000 requests a second) against sutproxy's simulated LLM in
#      process, each preceded by a plain Poisson run of the same rate and
#      lengths on the same path (the baseline, for a ratio on a shared
#      machine): issue lateness mean/p99/max, p99 held under 1 ms.
#      1a: sutproxy in the test's process (its record of every request
#      checked; the server's garbage shares the generator's heap, so its
#      collections pause the issuer too). 1b: sutproxy in a process of its
#      own, as deployed (make demo, a real endpoint), REPEAT times
#      (default 5): the generator's own lateness, the bound's.
#   2. pkg/shape TestTraceMemory: a 10^6-line Mooncake trace (100 MiB)
#      checked, walked twice and replayed against a null SUT at 50,000
#      requests a second (20 s), then a plain Poisson run of the same count
#      and rate, each in its own process: max RSS (getrusage) of each.
# Takes about 3 minutes. Run it on an idle machine: the lateness is a
# timing claim.
set -eu
cd "$(dirname "$0")/.."
OUT=${BENCH_OUT:-/tmp/trace-replay-bench.txt}
echo "date: $(date -u +%FT%TZ)  machine: $(nproc) cores, $(uname -r)  load: $(cut -d' ' -f1-3 /proc/loadavg)  commit: $(git rev-parse --short HEAD)" | tee "$OUT"
# 1a. sutproxy in the test's process (its record of every request checked).
echo "1a. sutproxy in process" | tee -a "$OUT"
NETLOADGEN_TRACE_REPLAY_BENCH=1 go test -count=1 -v -timeout 10m -run 'TestTraceReplay$' ./pkg/runner/ 2>&1 |
	tee -a "$OUT" | grep -E 'FIGURE|want under|^(--- |ok|FAIL)' | sed 's/^ *tracereplay_test.go:[0-9]*: //' || true
# 1b. sutproxy in a process of its own, as deployed, both processes on
# every CPU (no record: the schedule, the lengths and the counts are
# checked from the run's own export). Pinning them apart (taskset) leaves
# the test one CPU and so GOMAXPROCS 1: its answers' readers and its
# issuer then share one P (p99 1.7–3.7 ms, bench/RESULTS.md).
work=$(mktemp -d)
go build -o "$work/sutproxy" ./cmd/sutproxy
go test -c -o "$work/runner.test" ./pkg/runner/
"$work/sutproxy" --http-addr 127.0.0.1:0 --grpc-addr 127.0.0.1:0 --ready-file "$work/ready.json" --log-level error \
	--model name=replay,kind=llm,max_seqs=1024,step=1ms,per_seq=1us,prefill=1ns &
sut=$!
trap 'kill $sut 2>/dev/null; wait $sut 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$work/ready.json" ] && break; sleep 0.1; done
for i in $(seq "${REPEAT:-5}"); do
	echo "1b. sutproxy in a process of its own, sitting $i" | tee -a "$OUT"
	(cd pkg/runner && NETLOADGEN_TRACE_REPLAY_BENCH=1 \
		NETLOADGEN_TRACE_REPLAY_BENCH_HTTP=$(sed -E 's/.*"http":"([^"]+)".*/\1/' "$work/ready.json") \
		NETLOADGEN_TRACE_REPLAY_BENCH_GRPC=$(sed -E 's/.*"grpc":"([^"]+)".*/\1/' "$work/ready.json") \
		"$work/runner.test" -test.count=1 -test.v -test.timeout 10m -test.run 'TestTraceReplay$' 2>&1) |
		tee -a "$OUT" | grep -E 'FIGURE|want under|^(--- |ok|FAIL|PASS)' | sed 's/^ *tracereplay_test.go:[0-9]*: //' || true
done
for mode in trace plain; do
	NETLOADGEN_TRACE_MEM_BENCH=$mode go test -count=1 -v -timeout 10m -run 'TestTraceMemory$' ./pkg/shape/ 2>&1 |
		tee -a "$OUT" | grep -E 'FIGURE|^(--- FAIL|FAIL)' | sed 's/^ *tracemem_test.go:[0-9]*: //'
done

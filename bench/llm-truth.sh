#!/bin/sh
# Generative truth (issue 20's acceptance), against sutproxy's recording
# simulated LLM in process on 127.0.0.1 (law: pkg/runner/llm_truth_test.go,
# truthLaw): Server runs (Poisson) of 8 s at 50% and 90% of its capacity,
# over HTTP SSE (openai-chat) and gRPC (kserve-stream):
#   - mean TTFT and TPOT measured by the run vs the discrete-event truth
#     (sim.LLMTruth) of the run's own scheduled arrivals: within 5%
#   - the same means vs sutproxy's emission record (recorded at the socket
#     write): within 0.2 ms
#   - every token's arrival at the client vs its emission (matched by
#     request id): p50/p99/p99.9/max/min of the offset; p99 within 0.2 ms
# Takes about 40 s. Run it on an idle machine: a stall of the machine
# shows as a token's offset of milliseconds.
set -eu
cd "$(dirname "$0")/.."
NETLOADGEN_LLM_TRUTH_BENCH=1 go test -count=1 -v -timeout 10m -run 'TestLLMTruth$' ./pkg/runner/ 2>&1 |
	tee "${BENCH_OUT:-/tmp/llm-truth-bench.txt}" |
	grep -E 'llm_truth_test.go:[0-9]+: |^(---|ok|FAIL|PASS)' | sed 's/^ *llm_truth_test.go:[0-9]*: //'

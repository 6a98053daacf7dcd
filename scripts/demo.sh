#!/usr/bin/env bash
# make demo: start sutproxy (simulated models) and the loadgend daemon on
# loopback, then drive loadgend through its API with curl as a user would:
# probe the endpoint, start a Server run, watch its events, show the
# verdict with its reasons and warnings. Everything this script started is
# stopped at the end (also on Ctrl-C).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin}
QPS=${DEMO_QPS:-500}
DURATION_MS=${DEMO_DURATION_MS:-10000}
BOUND_MS=${DEMO_TARGET_LATENCY_MS:-10}
work=$(mktemp -d "${TMPDIR:-/tmp}/netloadgen-demo.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for FILE PATTERN: until a line matching PATTERN appears in FILE.
wait_for() {
  for _ in $(seq 100); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "timed out waiting for $2 in $1" >&2
  cat "$1" >&2
  exit 2
}

echo "== sutproxy: KServe v2 server with simulated models, free ports on 127.0.0.1"
"$BIN/sutproxy" --http-addr 127.0.0.1:0 --grpc-addr 127.0.0.1:0 \
  --ready-file "$work/sutproxy.json" --log-level warn &
pids+=($!)
wait_for "$work/sutproxy.json" '"http"'
SUT="http://$(sed -E 's/.*"http":"([^"]+)".*/\1/' "$work/sutproxy.json")"
echo "   $SUT"

echo "== loadgend: the daemon, data in $work/data"
LOADGEND_LISTEN=127.0.0.1:0 LOADGEND_DATA_DIR="$work/data" "$BIN/loadgend" 2>"$work/loadgend.log" &
pids+=($!)
wait_for "$work/loadgend.log" 'loadgend listening'
API="http://$(sed -nE 's/.*"msg":"loadgend listening","addr":"([^"]+)".*/\1/p' "$work/loadgend.log" | head -1)"
echo "   $API"

echo
echo "== curl -X POST $API/v1/probe"
curl -sS -X POST "$API/v1/probe" -H 'Content-Type: application/json' -d "{\"target\":\"$SUT\",\"model\":\"identity\"}" |
  grep -E '^  "(live|ready|max_batch_size|batched)"|"latency_ms"|"ok"'

echo
echo "== curl -X POST $API/v1/runs   (Server, $QPS QPS Poisson, ${DURATION_MS} ms, p99 <= ${BOUND_MS} ms)"
created=$(curl -sS -X POST "$API/v1/runs" -H 'Content-Type: application/json' -d "{
  \"target\": \"$SUT\", \"model\": \"identity\", \"scenario\": \"Server\", \"ruleset\": \"loadgen6\",
  \"settings\": {\"target_qps\": $QPS, \"min_duration_ms\": $DURATION_MS, \"min_query_count\": 1000, \"target_latency_ms\": $BOUND_MS}}")
echo "$created"
ID=$(echo "$created" | sed -nE 's/.*"id": "([^"]+)".*/\1/p')

echo
echo "== curl -N $API/v1/runs/$ID/events   (every 4th progress event shown)"
curl -sSN "$API/v1/runs/$ID/events" | awk '
  /^event: state/ { state = 1; next }
  /^event: progress/ { state = 0; n++; next }
  /^data: / { if (state || n % 4 == 1) print substr($0, 1, 200) }'

echo
echo "== curl $API/v1/runs/$ID   (the verdict, result.json's invalid_reasons and warnings)"
status=$(curl -sS "$API/v1/runs/$ID")
state=$(echo "$status" | sed -nE 's/^  "validity": "([A-Z]+)".*/\1/p')
echo "   validity: ${state:-unknown}"
echo "$status" | awk '
  /^  "(invalid_reasons|warnings)": \[/ { name = $1; gsub(/[":]/, "", name); print "   " name ":"; list = 1; next }
  list && /^  \]/ { list = 0; next }
  list { sub(/^ +/, ""); sub(/,$/, ""); print "    * " $0 }'
echo "   run $ID: ${state:-unknown}; summary: curl $API/v1/runs/$ID/files/mlperf_log_summary.txt; all files under $work/data/runs/$ID"
[ "$state" = VALID ]

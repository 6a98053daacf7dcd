#!/usr/bin/env bash
# make demo: start sutproxy on loopback, run a short MLPerf Server scenario
# against its simulated `identity` model through the real network path, print
# the result, and stop everything this script started (also on Ctrl-C).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin}
QPS=${DEMO_QPS:-500}
DURATION_MS=${DEMO_DURATION_MS:-10000}
work=$(mktemp -d "${TMPDIR:-/tmp}/netloadgen-demo.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== starting sutproxy (simulated models) on 127.0.0.1, free ports"
"$BIN/sutproxy" --http-addr 127.0.0.1:0 --grpc-addr 127.0.0.1:0 \
  --ready-file "$work/sutproxy.json" --log-level warn &
pids+=($!)
for _ in $(seq 100); do
  [ -s "$work/sutproxy.json" ] && break
  kill -0 "${pids[0]}" 2>/dev/null || { echo "sutproxy exited" >&2; exit 2; }
  sleep 0.1
done
[ -s "$work/sutproxy.json" ] || { echo "sutproxy did not start within 10 s" >&2; exit 2; }
http=$(sed -E 's/.*"http":"([^"]+)".*/\1/' "$work/sutproxy.json")
echo "   sutproxy HTTP on $http"

echo "== loadgend run: Server scenario, ${QPS} QPS Poisson, ${DURATION_MS} ms, p99 bound 10 ms, model identity over HTTP"
set +e
"$BIN/loadgend" run --target "http://$http" --model identity --scenario Server \
  --target-qps "$QPS" --target-latency-ms 10 --min-duration-ms "$DURATION_MS" --min-query-count 1000 \
  --out "$work/run"
status=$?
set -e
echo
if [ -f "$work/run/mlperf_log_summary.txt" ]; then
  echo "== mlperf_log_summary.txt (first lines)"
  sed -n '1,40p' "$work/run/mlperf_log_summary.txt"
  echo "   all files: $work/run"
fi
exit $status

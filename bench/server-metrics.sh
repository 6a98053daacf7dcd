#!/usr/bin/env bash
# Scraping a hostile metrics endpoint must never cost the run (issue 30):
# Server runs against sutproxy alternate without scraping
# (--no-server-metrics) and with every hostile kind at once (one URL each
# on bench/hostilemetrics: a 10 MB body, 100,000 series, 5 s per scrape,
# a slow body, an endless body, malformed text, 404, a redirect, a
# connection reset) plus sutproxy's own /metrics. Each row: the verdict,
# latency and issue lateness p99, loadgend's CPU, and the error kinds
# result.json counted. A benchmark, not a test: the machine is shared, so
# it alternates REPEAT pairs and prints every figure.
#
#   bench/server-metrics.sh                 # 3 pairs of 10 s runs at 5,000 QPS
#   REPEAT=5 QPS=10000 bench/server-metrics.sh
#   HOSTILE_CPUS=0 bench/server-metrics.sh  # the hostile server on the client's CPU instead
#   HOSTILE_QUOTA=10000 bench/server-metrics.sh  # and capped at 10% of a CPU (root, cgroup v1)
#
# loadgend is pinned to CPU 0, sutproxy and the hostile server (nice 19) to
# CPU 1.
# --server-metrics-max-bytes 8000000 makes the 10 MB body too_large (the
# 100,000 series, ~2.5 MB, are read and bounded by the series bound).
set -euo pipefail
cd "$(dirname "$0")/.."
QPS=${QPS:-5000}
DURATION_MS=${DURATION_MS:-10000}
REPEAT=${REPEAT:-3}
work=$(mktemp -d)
go build -o "$work/loadgend" ./cmd/loadgend
go build -o "$work/sutproxy" ./cmd/sutproxy
go build -o "$work/hostile" ./bench/hostilemetrics
taskset -c 1 "$work/sutproxy" --http-addr 127.0.0.1:0 --grpc-addr off --ready-file "$work/ready.json" --log-level error \
  --model name=fast,fn=echo,dtype=FP32,dims=16,max_batch=8,latency=constant:1ms,instances=64 &
sut=$!
# The hostile server shares CPU 1 with the target at nice 19: its own work
# (writing 10 MB bodies, the endless one) must not slow the target, whose
# latency is the verdict's, since what is measured is the client's cost.
taskset -c "${HOSTILE_CPUS:-1}" nice -n 19 "$work/hostile" --ready-file "$work/hostile.addr" &
hostile=$!
# HOSTILE_QUOTA=N (µs of CPU per 100 ms): the hostile server in a cgroup of
# its own with that quota (cgroup v1's cpu controller), which caps its time,
# its send system calls included, where nice only lowers its priority.
if [ -n "${HOSTILE_QUOTA:-}" ]; then
  cg=/sys/fs/cgroup/cpu/netloadgen-hostile
  mkdir -p "$cg"
  echo 100000 >"$cg/cpu.cfs_period_us"
  echo "$HOSTILE_QUOTA" >"$cg/cpu.cfs_quota_us"
  echo "$hostile" >"$cg/cgroup.procs"
fi
trap 'kill $sut $hostile 2>/dev/null; wait $sut $hostile 2>/dev/null; rm -rf "$work"; [ -z "${HOSTILE_QUOTA:-}" ] || rmdir /sys/fs/cgroup/cpu/netloadgen-hostile 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$work/ready.json" ] && [ -s "$work/hostile.addr" ] && break; sleep 0.1; done
http=$(sed -E 's/.*"http":"([^"]+)".*/\1/' "$work/ready.json")
h="http://$(cat "$work/hostile.addr")"
hostile_flags=(--server-metrics "http://$http/metrics" --server-metrics-max-bytes "${MAX_BYTES:-8000000}")
for p in ${HOSTILE_KINDS:-huge series slow slowbody endless malformed 404 redirect reset}; do
  hostile_flags+=(--server-metrics "$h/$p")
done
echo "date: $(date -u +%FT%TZ)  machine: $(nproc) cores, $(uname -r)  load: $(cut -d' ' -f1-3 /proc/loadavg)  qps: $QPS  duration: ${DURATION_MS} ms"
printf '%-8s %-3s %-8s %11s %11s %11s %7s  %s\n' scrape run verdict lat_p99_ms late_p99_ms late_max_ms cpu_s errors
for i in $(seq "$REPEAT"); do
  for mode in off hostile; do
    out="$work/$mode-$i"
    if [ "$mode" = off ]; then flags=(--no-server-metrics); else flags=("${hostile_flags[@]}"); fi
    set +e
    /usr/bin/time -f "%U %S" -o "$work/time" taskset -c 0 "$work/loadgend" run --target "http://$http" --model fast --scenario Server \
      --target-qps "$QPS" --target-latency-ms 10 --min-duration-ms "$DURATION_MS" --min-query-count 1 --out "$out" "${flags[@]}" >/dev/null 2>&1
    set -e
    python3 - "$out/result.json" "$work/time" "$mode" "$i" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
u, s = open(sys.argv[2]).read().split()[-2:]
def p(stats, q):
    for e in stats.get("percentiles", []):
        if abs(e["p"] - q) < 1e-9:
            return e["latency_ns"] / 1e6
    return float("nan")
sm = r.get("server_metrics") or {}
errs = ",".join(f"{k}={v}" for k, v in sorted((sm.get("errors") or {}).items())) or "-"
infer = [x for x in sm.get("series", []) if x["name"] == "sutproxy_requests_total" and x["labels"].get("route") == "infer"]
if infer:
    errs += f"  infer_delta={sum(x.get('delta', 0) for x in infer):.0f}/issued={r['samples_issued']}"
print(f'{sys.argv[3]:<8} {sys.argv[4]:<3} {r["result_validity"]:<8} {p(r["sample_latency"], 0.99):11.3f} '
      f'{p(r["issue_lateness"], 0.99):11.3f} {r["issue_lateness"]["max_ns"]/1e6:11.3f} {float(u)+float(s):7.2f}  {errs}')
PY
  done
done

#!/usr/bin/env bash
# Memory per query of a Server run (issue 28): a benchmark, not a test.
#
#   bench/mem.sh              # engine on a virtual clock + loadgend against nullserver
#   RSS=0 bench/mem.sh        # the engine figures only (instant)
#   DURATIONS="5 20 60" bench/mem.sh
#
# 1. pkg/runlog TestMemoryPerQuery (NETLOADGEN_MEM_BENCH=1): a Server run at
#    20,000 QPS for 5 and 20 s of virtual time with an inline SUT, the live
#    heap in bytes per query after NewRun, Execute and runlog.Write, and what
#    each phase allocated; heap profiles in $OUT (go tool pprof
#    -sample_index=inuse_space|alloc_space -top $OUT/heap-20s.pprof).
# 2. loadgend run against bench/nullserver at 20,000 QPS for each of
#    DURATIONS seconds, client pinned to CPU 0 and target to CPU 1 as
#    bench/peers.sh does: max RSS (/usr/bin/time %M) and the slope between
#    the shortest and the longest run in bytes per query.
set -euo pipefail
cd "$(dirname "$0")/.."
QPS=${QPS:-20000}
DURATIONS=${DURATIONS:-"5 20"}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
echo "date: $(date -u +%FT%TZ)  machine: $(nproc) cores, $(uname -r)  commit: $(git rev-parse --short HEAD)  out: $OUT"
NETLOADGEN_MEM_BENCH=1 NETLOADGEN_MEM_PROFILE="$OUT" go test -count=1 -run TestMemoryPerQuery -v ./pkg/runlog/ | grep -E 'queries=|B/query'
[ "${RSS:-1}" = 1 ] || exit 0
go build -o "$OUT/loadgend" ./cmd/loadgend
go build -o "$OUT/nullserver" ./bench/nullserver
taskset -c 1 "$OUT/nullserver" --ready-file "$OUT/ready.json" 2>/dev/null &
ns=$!
trap 'kill $ns 2>/dev/null; wait $ns 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$OUT/ready.json" ] && break; sleep 0.1; done
http=$(sed -E 's/.*"http":"([^"]+)".*/\1/' "$OUT/ready.json")
printf '%-6s %-8s %10s %12s %10s\n' secs verdict queries max_rss_kB cpu_s
for d in $DURATIONS; do
  /usr/bin/time -f '%U %S %M' -o "$OUT/time-$d" taskset -c 0 "$OUT/loadgend" run --target "http://$http" --model null \
    --scenario Server --target-qps "$QPS" --target-latency-ms 10 --min-duration-ms $((d * 1000)) --min-query-count 1 \
    --no-early-verdict --out "$OUT/run-$d" >/dev/null 2>"$OUT/stderr-$d"
  python3 - "$OUT/run-$d/result.json" "$OUT/time-$d" "$d" <<'PY' | tee -a "$OUT/rss.tsv"
import json, sys
r = json.load(open(sys.argv[1]))
u, s, m = open(sys.argv[2]).read().split()[-3:]
print(f'{sys.argv[3]:<6} {r["result_validity"]:<8} {r["result_query_count"]:10d} {int(m):12d} {float(u)+float(s):10.2f}')
PY
done
python3 - "$OUT/rss.tsv" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
if len(rows) >= 2:
    a, b = rows[0], rows[-1]
    print(f'slope: {(int(b[3]) - int(a[3])) * 1024 / (int(b[2]) - int(a[2])):.0f} bytes of max RSS per query ({a[0]} s to {b[0]} s)')
PY

#!/usr/bin/env bash
# Issuers on one host (issue 29): a benchmark, not a test.
#
#   bench/scale.sh              # for issuers 1..MAX_ISSUERS: the highest open-loop
#                               # Server rate held VALID with issue lateness p99 <
#                               # LATENESS_US, by doubling then bisecting short runs
#   bench/scale.sh cpu          # CPU per request, --issuers 2 against 1, at QPS
#                               # (20000): REPEAT alternated pairs (which goes first
#                               # turns each pair), each pair's ratio and the medians
#                               # (issue 29's acceptance: the ratio <= 1.1); every
#                               # run its full DURATION (--no-early-verdict), the
#                               # whole process's CPU (/usr/bin/time) over the
#                               # samples it issued
#
# loadgend run against bench/nullserver over HTTP: loadgend pinned to
# CLIENT_CPUS, the null server to SERVER_CPUS (taskset; the defaults split the
# host's cores in two halves, the client the first: on a 2-core host both
# issuers share CPU 0, so the curve shows what sharding costs, not what it
# gains). Prints a table and writes $OUT/scale.tsv or $OUT/cpu.tsv; appends
# nothing to bench/RESULTS.md by itself.
#
# Env: MAX_ISSUERS (nproc), ISSUERS (the list; default 1..MAX_ISSUERS),
# START_QPS (10000: the first trial of each count; doubled while it passes),
# MAX_QPS (1000000), PRECISION (0.05: bisection ends at hi/lo <= 1+PRECISION),
# MAX_TRIALS (10 per issuer count), DURATION_MS (2000 a trial), LATENCY_MS
# (10, the Server bound), LATENESS_US (1000), QPS (cpu: 20000), DURATION
# (cpu: 10 s a run), REPEAT (cpu: 3), CLIENT_CPUS, SERVER_CPUS, OUT (a new
# temporary directory).
#
# Time: a trial is DURATION_MS plus ~1 s of start-up and log writing; a
# count takes at most MAX_TRIALS trials (~30 s at the defaults), the whole
# curve MAX_ISSUERS times that. The cpu mode takes 2 x REPEAT x (DURATION +
# ~1 s): ~70 s at the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-curve}
cores=$(nproc)
half=$((cores / 2 > 0 ? cores / 2 : 1))
CLIENT_CPUS=${CLIENT_CPUS:-0-$((half - 1))}
if [ "$cores" -gt 1 ]; then SERVER_CPUS=${SERVER_CPUS:-$half-$((cores - 1))}; else SERVER_CPUS=${SERVER_CPUS:-0}; fi
MAX_ISSUERS=${MAX_ISSUERS:-$cores}
ISSUERS=${ISSUERS:-$(seq -s ' ' 1 "$MAX_ISSUERS")}
START_QPS=${START_QPS:-10000}
MAX_QPS=${MAX_QPS:-1000000}
PRECISION=${PRECISION:-0.05}
MAX_TRIALS=${MAX_TRIALS:-10}
DURATION_MS=${DURATION_MS:-2000}
LATENCY_MS=${LATENCY_MS:-10}
LATENESS_US=${LATENESS_US:-1000}
QPS=${QPS:-20000}
DURATION=${DURATION:-10}
REPEAT=${REPEAT:-3}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
echo "date: $(date -u +%FT%TZ)  machine: $cores cores, $(lscpu | sed -n 's/^Model name: *//p'), $(uname -r)  commit: $(git rev-parse --short HEAD)  client CPUs $CLIENT_CPUS, server CPUs $SERVER_CPUS  load: $(cut -d' ' -f1-3 /proc/loadavg)  out: $OUT"
go build -o "$OUT/loadgend" ./cmd/loadgend
go build -o "$OUT/nullserver" ./bench/nullserver
rm -f "$OUT/ready.json"
taskset -c "$SERVER_CPUS" "$OUT/nullserver" --ready-file "$OUT/ready.json" 2>/dev/null &
ns=$!
trap 'kill $ns 2>/dev/null; wait $ns 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$OUT/ready.json" ] && break; sleep 0.1; done
http=$(sed -E 's/.*"http":"([^"]+)".*/\1/' "$OUT/ready.json")

# trial ISSUERS QPS DURATION_MS NAME [FLAGS...]: one Server run; prints
# "verdict issued lateness_p99_us cpu_s cpu_us_per_request".
trial() {
  local n=$1 q=$2 ms=$3 name=$4
  shift 4
  /usr/bin/time -f '%U %S' -o "$OUT/$name.time" taskset -c "$CLIENT_CPUS" "$OUT/loadgend" run --target "http://$http" --model null \
    --scenario Server --target-qps "$q" --target-latency-ms "$LATENCY_MS" --min-duration-ms "$ms" --min-query-count 1 \
    --issuers "$n" --out "$OUT/$name" "$@" >/dev/null 2>"$OUT/$name.stderr" || true # INVALID exits 1: the row says so
  python3 - "$OUT/$name/result.json" "$OUT/$name.time" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except OSError:
    print("ERROR 0 nan nan nan"); sys.exit()
u, s = open(sys.argv[2]).read().split()[-2:]
cpu = float(u) + float(s)
n = r.get("samples_issued") or 0
late = next((p["latency_ns"] for p in r["issue_lateness"]["percentiles"] if abs(p["p"] - 0.99) < 1e-9), float("nan"))
print(r["result_validity"], n, f"{late / 1e3:.1f}", f"{cpu:.2f}", f"{cpu / n * 1e6:.2f}" if n else "nan")
PY
}

# passes VERDICT LATENESS_US: VALID and on time.
passes() { [ "$1" = VALID ] && python3 -c "import sys; sys.exit(0 if float('$2') < $LATENESS_US else 1)"; }

if [ "$mode" = cpu ]; then
  printf '%-4s %-8s %-8s %10s %12s %16s\n' rep issuers verdict issued late_p99_us cpu_us/request | tee "$OUT/cpu.tsv"
  for rep in $(seq "$REPEAT"); do
    order="1 2"; [ $((rep % 2)) -eq 0 ] && order="2 1"
    for n in $order; do
      read -r v issued late _ per < <(trial "$n" "$QPS" $((DURATION * 1000)) "cpu-$rep-$n" --no-early-verdict)
      printf '%-4s %-8s %-8s %10s %12s %16s\n' "$rep" "$n" "$v" "$issued" "$late" "$per" | tee -a "$OUT/cpu.tsv"
    done
  done
  python3 - "$OUT/cpu.tsv" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
per = {}
for rep, n, v, issued, late, cpu in rows:
    per.setdefault(rep, {})[n] = float(cpu)
ratios = [p["2"] / p["1"] for p in per.values() if "1" in p and "2" in p]
one = statistics.median(p["1"] for p in per.values())
two = statistics.median(p["2"] for p in per.values())
print(f"ratios 2/1 per pair: {' '.join(f'{r:.3f}' for r in ratios)}; median ratio {statistics.median(ratios):.3f}; "
      f"median CPU per request: 1 issuer {one:.2f} us, 2 issuers {two:.2f} us (acceptance: ratio <= 1.1)")
PY
  exit 0
fi

printf '%-8s %10s %7s %14s %16s\n' issuers peak_qps trials late_p99_us cpu_us/request | tee "$OUT/scale.tsv"
for n in $ISSUERS; do
  lo=0 hi=0 q=$START_QPS trials=0 best="- nan nan"
  while [ "$trials" -lt "$MAX_TRIALS" ]; do
    trials=$((trials + 1))
    read -r v _ late _ per < <(trial "$n" "$q" "$DURATION_MS" "scale-$n-$q")
    if passes "$v" "$late"; then lo=$q best="$q $late $per"; else hi=$q; fi
    echo "  issuers $n: $q QPS: $v, lateness p99 $late us" >&2
    if [ "$hi" -eq 0 ]; then
      [ "$q" -ge "$MAX_QPS" ] && break
      q=$((q * 2 > MAX_QPS ? MAX_QPS : q * 2))
      continue
    fi
    python3 -c "import sys; sys.exit(0 if $hi <= $lo * (1 + $PRECISION) else 1)" && break
    q=$(((lo + hi) / 2))
    [ "$lo" -eq 0 ] && q=$((hi / 2))
  done
  read -r peak late per <<<"$best"
  printf '%-8s %10s %7s %14s %16s\n' "$n" "$peak" "$trials" "$late" "$per" | tee -a "$OUT/scale.tsv"
done

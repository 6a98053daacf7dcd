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
# 2. bench/longrun.sh for each of DURATIONS seconds at QPS: loadgend against
#    bench/nullserver, pinned, max RSS and max RSS minus what the run kept.
set -euo pipefail
cd "$(dirname "$0")/.."
QPS=${QPS:-20000}
DURATIONS=${DURATIONS:-"5 20"}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
echo "date: $(date -u +%FT%TZ)  machine: $(nproc) cores, $(uname -r)  commit: $(git rev-parse --short HEAD)  out: $OUT"
NETLOADGEN_MEM_BENCH=1 NETLOADGEN_MEM_PROFILE="$OUT" go test -count=1 -run TestMemoryPerQuery -v ./pkg/runlog/ | grep -E 'queries=|B/query'
[ "${RSS:-1}" = 1 ] || exit 0
QPS=$QPS DURATIONS=$DURATIONS OUT="$OUT/longrun" bench/longrun.sh

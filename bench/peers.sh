#!/usr/bin/env bash
# netloadgen against its peers, side by side in one run, on loopback: every
# client pinned to CPU 0 (taskset), the target to CPU 1. A benchmark, not a
# test: the machine is shared and noisy, so each row runs REPEAT times and
# bench/peers_parse.py reports the median and the range.
#
#   bench/peers.sh install      # wrk (Debian), fortio, hey, ghz (go install)
#   bench/peers.sh              # the table: QPS=20000, 10 s rows, 3 repeats, then
#                               # issue 8's ratios within each repeat (pairs.md)
#   bench/peers.sh sweep        # Server over HTTP at RATES: VALID? lateness p99?
#   bench/peers.sh idle         # Server at 100 QPS for 20 s: % of a core
#   bench/peers.sh tls          # issue 19: HTTPS and gRPC over TLS against sutproxy
#                               # serving TLS (QPS=10000): netloadgen's HTTPS Server
#                               # run against fortio -cacert, its grpcs Offline 32
#                               # against ghz --cacert -c 32 (pairs.md); optional
#                               # rows nlg-https-pool (--http-client pool),
#                               # nlg-https-slack500, and nlg-https-before
#                               # (LOADGEND_BEFORE=another loadgend build)
#   bench/peers.sh wrk2         # issue 28: netloadgen's HTTP Server run against wrk2
#                               # (-R, open loop, the same body and -c CONNS) at each of
#                               # WRK2_RATES (20000 50000), the two alternated (which goes
#                               # first turns each repeat; LOADGEND_BEFORE: a third row,
#                               # nlg-before-rQ, another loadgend build); then wrk2.md: CPU per request,
#                               # netloadgen / wrk2, per repeat and median, whole process
#                               # and steady state, and each row's load average (a helper
#                               # or build on the machine shows there). Needs a wrk2 on
#                               # PATH (WRK2 names another): Debian has none, see
#                               # bench/RESULTS.md "Issue 28: CPU per request vs wrk2".
#   bench/peers.sh llm          # issue 20: streaming Server at QPS=200 x 256 output
#                               # tokens (128 in) against a simulated LLM far below
#                               # its capacity (LLM_MODEL): OpenAI chat over HTTP SSE
#                               # and ModelStreamInfer over gRPC (grpcloop's Generator;
#                               # nlg-llm-grpc-go: grpc-go's), rows alternated;
#                               # then tokens.md: tokens/s, TTFT/TPOT, CPU per token
#
# Client CPU is measured twice: the whole process (/usr/bin/time: start-up,
# sample generation and log writing included) and its steady state, from
# /proc/PID/stat between 2 s after the start and 1 s before the end, over
# the requests that window holds at the achieved rate. The same window
# gives the client's run-queue delay (/proc/PID/task/*/schedstat): time it
# was runnable but another process had CPU 0, i.e. how noisy the row was.
#
# The tls mode makes a throw-away CA and a certificate for 127.0.0.1 and
# localhost (openssl, in a temporary directory removed on exit: no key is
# ever written under the repository); sutproxy serves TLS on both listeners
# (so does the null server, given --tls-cert and --tls-key).
#
# The llm mode's model (LLM_MODEL) takes steps of 2 ms + 1 µs a sequence +
# 1 µs a prefilled token with up to 1024 sequences: at 200 req/s x 256
# tokens ≈110 sequences decode at once, TPOT ≈2.1 ms, E2E ≈0.56 s, and its
# capacity (docs/sutproxy-models.md, "Simulated LLMs") is (1024/256) /
# (2 + 1.024 + 4 x 128 x 0.001 ms) ≈ 1130 req/s, 5.6x the load: the rows
# measure the client, not a queue. Its bound (LATENCY_MS, 1000) leaves
# E2E p99 ≈0.6 s room.
#
# Env: QPS (20000; tls: 10000; llm: 200), DURATION (s, 10), REPEAT (3), CONNS (32, closed-loop
# peers and ghz), TARGETS ("nullserver sutproxy"), ROWS (all rows below),
# RATES ("20000 30000 40000 50000"), OFFLINE_QPS (45000), OUT (bench/out/DATE: raw outputs and
# rows.tsv).
set -euo pipefail
cd "$(dirname "$0")/.."
GOBIN=$(go env GOPATH)/bin
export PATH="$GOBIN:$PATH"

if [ "${1:-}" = install ]; then
  # Versions that resolved here on 2026-02: wrk 4.1.0 (Debian 12), fortio
  # v1.66.2 (newer pulls a dependency the module proxy refuses), hey v0.1.5,
  # ghz v0.93.0.
  command -v wrk >/dev/null || apt-get install -y wrk
  GOFLAGS= go install fortio.org/fortio@v1.66.2
  GOFLAGS= go install github.com/rakyll/hey@v0.1.5
  GOFLAGS= go install github.com/bojand/ghz/cmd/ghz@v0.93.0
  exit 0
fi

# The harness itself (its subshells, pgrep, the sampler's awk, cat and date)
# runs on CPU 1, the target's, and so does all it starts but the client,
# which taskset puts on CPU 0: on CPU 0, the sampler's forks at its window's
# two ends took the client's core for milliseconds, and every row's issue
# lateness p99 spiked in those two seconds (1.7–3.8 ms, where the others
# stayed under 0.3; bench/RESULTS.md, 2026-11-28).
taskset -pc 1 $$ >/dev/null

MODE=${1:-table}
if [ "$MODE" = tls ]; then
  QPS=${QPS:-10000}
  TARGETS=${TARGETS:-"nullserver-tls sutproxy-tls"}
  ROWS=${ROWS:-"nlg-https fortio-https nlg-grpcs-offline32 ghz-tls-c32"}
  # Offline over TLS completes ~45-55k samples/s here: 55k x 10 s x 1.1
  # samples keep the run past its 10 s minimum (45k fell short, INVALID).
  OFFLINE_QPS=${OFFLINE_QPS:-55000}
fi
if [ "$MODE" = llm ]; then
  QPS=${QPS:-200}
  TARGETS=${TARGETS:-sutproxy-llm}
  ROWS=${ROWS:-"nlg-llm-sse nlg-llm-grpc nlg-llm-grpc-go"}
  NLG_MODEL=llmbench
  LATENCY_MS=${LATENCY_MS:-1000}
  LLM_MODEL=${LLM_MODEL:-name=llmbench,kind=llm,max_seqs=1024,step=2ms,per_seq=1us,prefill=1us}
fi
if [ "$MODE" = wrk2 ]; then
  WRK2=${WRK2:-wrk2}
  command -v "$WRK2" >/dev/null || { echo "peers.sh wrk2: no $WRK2 on PATH (set WRK2)" >&2; exit 1; }
  WRK2_RATES=${WRK2_RATES:-"20000 50000"}
  TARGETS=${TARGETS:-nullserver}
fi
QPS=${QPS:-20000}
DURATION=${DURATION:-10}
REPEAT=${REPEAT:-3}
CONNS=${CONNS:-32}
TARGETS=${TARGETS:-"nullserver sutproxy"}
ROWS=${ROWS:-"nlg-http-bin nlg-http-bin-slack50 nlg-http-bin-pool nlg-http-json nlg-grpc nlg-grpc-offline32 wrk-c32 fortio-qps fortio-max hey-q ghz-c32"}
RATES=${RATES:-"20000 30000 40000 50000 60000 70000"}
# Offline issues offline_expected_qps x duration x 1.1 samples at once: a
# guess near the achieved rate keeps the row near DURATION.
OFFLINE_QPS=${OFFLINE_QPS:-45000}
OUT=${OUT:-bench/out/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT" bench/out
[ -e bench/out/.gitignore ] || echo "*" >bench/out/.gitignore 2>/dev/null || true
TSV="$OUT/rows.tsv"
make -s build
go build -o bin/nullserver ./bench/nullserver
python3 bench/peers_body.py "$OUT"
HLEN=$(cat "$OUT/hlen")

srv=
stop_target() { if [ -n "$srv" ]; then kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; srv=; fi; }
PKI=
cleanup() { stop_target; if [ -n "$PKI" ]; then rm -rf "$PKI"; fi; }
trap cleanup EXIT

# make_pki: a CA ($PKI/ca.pem) and a certificate it signed for 127.0.0.1
# and localhost ($PKI/srv.pem, $PKI/srv.key), ECDSA P-256, valid a day.
make_pki() {
  PKI=$(mktemp -d)
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout "$PKI/ca.key" -out "$PKI/ca.pem" -days 1 -subj /CN=peers-bench-ca \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
  openssl req "${ec[@]}" -keyout "$PKI/srv.key" -out "$PKI/srv.csr" -subj /CN=localhost 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' >"$PKI/srv.ext"
  openssl x509 -req -in "$PKI/srv.csr" -CA "$PKI/ca.pem" -CAkey "$PKI/ca.key" -CAcreateserial \
    -out "$PKI/srv.pem" -days 1 -extfile "$PKI/srv.ext" 2>/dev/null
}

start_target() { # $1: nullserver | sutproxy; sets HTTP, GRPC
  rm -f "$OUT/ready.json"
  case $1 in
    nullserver) taskset -c 1 bin/nullserver --ready-file "$OUT/ready.json" 2>/dev/null & ;;
    sutproxy) taskset -c 1 bin/sutproxy --http-addr 127.0.0.1:0 --grpc-addr 127.0.0.1:0 \
      --ready-file "$OUT/ready.json" --log-level error & ;;
    nullserver-tls) [ -n "$PKI" ] || make_pki
      taskset -c 1 bin/nullserver --tls-cert "$PKI/srv.pem" --tls-key "$PKI/srv.key" --ready-file "$OUT/ready.json" 2>/dev/null & ;;
    sutproxy-tls) [ -n "$PKI" ] || make_pki
      taskset -c 1 bin/sutproxy --http-addr 127.0.0.1:0 --grpc-addr 127.0.0.1:0 \
        --tls-cert "$PKI/srv.pem" --tls-key "$PKI/srv.key" --ready-file "$OUT/ready.json" --log-level error & ;;
    sutproxy-llm) taskset -c 1 bin/sutproxy --http-addr 127.0.0.1:0 --grpc-addr 127.0.0.1:0 --model "$LLM_MODEL" \
      --ready-file "$OUT/ready.json" --log-level error & ;;
  esac
  srv=$!
  for _ in $(seq 100); do [ -s "$OUT/ready.json" ] && break; sleep 0.1; done
  HTTP=$(sed -E 's/.*"http":"([^"]+)".*/\1/' "$OUT/ready.json")
  GRPC=$(sed -E 's/.*"grpc":"([^"]+)".*/\1/' "$OUT/ready.json")
}

# cpu_of PID: user+sys clock ticks of the process, all threads.
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# delay_of PID: ns its threads spent runnable but not running.
delay_of() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $2} END {printf "%d\n", s}'; }

# steal_of: clock ticks the hypervisor ran something else on this VM's
# CPUs (all of them): a row with steal measured a host that was busy.
steal_of() { awk '/^cpu /{print $9}' /proc/stat; }
# steady PID SECONDS FILE: the process's CPU and run-queue delay from 2 s in
# to 1 s before SECONDS, and the share of the VM's CPU time stolen by the
# host meanwhile, written to FILE as "cpu_s window_s delay_ms steal_pct".
steady() {
  local p=$1 secs=$2 file=$3 hz c0 d0 t0 s0 c1 d1 t1 s1
  hz=$(getconf CLK_TCK)
  sleep 2
  c0=$(cpu_of "$p") d0=$(delay_of "$p") t0=$(date +%s.%N) s0=$(steal_of)
  sleep $((secs - 3))
  [ -e "/proc/$p" ] || return 0 # ended before the window did: no steady figure
  c1=$(cpu_of "$p") d1=$(delay_of "$p") t1=$(date +%s.%N) s1=$(steal_of)
  awk -v c="$((c1 - c0))" -v hz="$hz" -v t0="$t0" -v t1="$t1" -v d="$((d1 - d0))" -v s="$((s1 - s0))" -v n="$(nproc)" \
    'BEGIN {printf "%.3f %.3f %.1f %.2f\n", c / hz, t1 - t0, d / 1e6, 100 * s / hz / (n * (t1 - t0))}' >"$file"
}

# timed TOOL NAME CMD...: runs CMD on CPU 0 under /usr/bin/time, output in
# $OUT/NAME.out, and appends the parsed row to rows.tsv.
timed() {
  local tool=$1 name=$2; shift 2
  local f="$OUT/$target-$name-$rep" tp cp sp
  echo "\$ $*" >"$f.cmd"
  set +e
  /usr/bin/time -f '%U %S %M' -o "$f.time" taskset -c 0 "$@" >"$f.stdout" 2>"$f.stderr" &
  tp=$!
  sleep 0.2
  cp=$(pgrep -P "$tp" | head -1)
  rm -f "$f.steady"
  sp=
  # The sampler's subshell must not run the EXIT trap (it would stop the
  # target).
  if [ -n "$cp" ] && [ "${DURATION}" -ge 5 ]; then (trap - EXIT; steady "$cp" "$DURATION" "$f.steady") & sp=$!; fi
  wait "$tp" || true
  if [ -n "$sp" ]; then wait "$sp" || true; fi
  set -e
  local res="$f.stdout"
  case $tool in loadgend) res="$f.d/result.json" ;; fortio | ghz) res="$f.json" ;; esac
  printf '%s\t%s\t%s\t%s\n' "$target" "$name" "$rep" "$(python3 bench/peers_parse.py row "$tool" "$res" "$f.time" "$f.steady")" | tee -a "$TSV"
}

nlg() { # name scenario target-url extra-args...
  local name=$1 scen=$2 url=$3; shift 3
  local d="$OUT/$target-$name-$rep.d"
  timed loadgend "$name" "${LOADGEND:-bin/loadgend}" run --target "$url" --model "${NLG_MODEL:-null}" --scenario "$scen" \
    --target-latency-ms "${LATENCY_MS:-10}" --min-duration-ms $((DURATION * 1000)) --min-query-count 1 --out "$d" "$@"
}

row() {
  local url="http://$HTTP/v2/models/null/infer" f="$OUT/$target-$1-$rep"
  case $1 in
    nlg-http-bin) nlg "$1" Server "http://$HTTP" --target-qps "$QPS" ;;
    nlg-http-bin-slack50) nlg "$1" Server "http://$HTTP" --target-qps "$QPS" --issue-slack 50us ;;
    nlg-http-bin-pool) nlg "$1" Server "http://$HTTP" --target-qps "$QPS" --http-client pool ;;
    nlg-http-json) nlg "$1" Server "http://$HTTP" --target-qps "$QPS" --json ;;
    nlg-grpc) nlg "$1" Server "grpc://$GRPC" --target-qps "$QPS" ;;
    nlg-grpc-offline32) nlg "$1" Offline "grpc://$GRPC" --target-qps "$OFFLINE_QPS" --max-inflight "$CONNS" --batch-size 1 ;;
    # wrk2 paces each connection at QPS/CONNS from its own start (-R), open
    # loop: a request late for its slot is charged from the slot (--latency).
    wrk2-*) BODY="$OUT/body.bin" HLEN=$HLEN timed wrk "$1" "$WRK2" -t1 -c"$CONNS" -R"$QPS" -d"${DURATION}s" --latency \
      -s bench/peers_wrk.lua "$url" ;;
    nlg-http-bin-r*) nlg "$1" Server "http://$HTTP" --target-qps "$QPS" ;;
    nlg-before-r*) LOADGEND=$LOADGEND_BEFORE nlg "$1" Server "http://$HTTP" --target-qps "$QPS" ;;
    wrk-c32) BODY="$OUT/body.bin" HLEN=$HLEN timed wrk "$1" wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -s bench/peers_wrk.lua "$url" ;;
    fortio-qps) timed fortio "$1" fortio load -quiet -qps "$QPS" -c "$CONNS" -t "${DURATION}s" -p 50,99 \
      -payload-file "$OUT/body.bin" -content-type application/octet-stream \
      -H "Inference-Header-Content-Length: $HLEN" -json "$f.json" "$url" ;;
    fortio-max) timed fortio "$1" fortio load -quiet -qps 0 -c "$CONNS" -t "${DURATION}s" -p 50,99 \
      -payload-file "$OUT/body.bin" -content-type application/octet-stream \
      -H "Inference-Header-Content-Length: $HLEN" -json "$f.json" "$url" ;;
    hey-q) timed hey "$1" hey -z "${DURATION}s" -c "$CONNS" -q $((QPS / CONNS)) -m POST -D "$OUT/body.bin" \
      -T application/octet-stream -H "Inference-Header-Content-Length: $HLEN" "$url" ;;
    nlg-https) nlg "$1" Server "https://$HTTP" --tls-ca "$PKI/ca.pem" --target-qps "$QPS" ;;
    # The goroutine client over TLS: what HTTPS runs used before the loop spoke TLS.
    nlg-https-pool) nlg "$1" Server "https://$HTTP" --tls-ca "$PKI/ca.pem" --target-qps "$QPS" --http-client pool ;;
    # A before/after row: LOADGEND_BEFORE is another build of loadgend.
    nlg-https-before) LOADGEND=$LOADGEND_BEFORE nlg "$1" Server "https://$HTTP" --tls-ca "$PKI/ca.pem" --target-qps "$QPS" ;;
    nlg-https-slack500) nlg "$1" Server "https://$HTTP" --tls-ca "$PKI/ca.pem" --target-qps "$QPS" --issue-slack 500us ;;
    nlg-grpcs-offline32) nlg "$1" Offline "grpcs://$GRPC" --tls-ca "$PKI/ca.pem" --target-qps "$OFFLINE_QPS" \
      --max-inflight "$CONNS" --batch-size 1 ;;
    fortio-https) timed fortio "$1" fortio load -quiet -qps "$QPS" -c "$CONNS" -t "${DURATION}s" -p 50,99 \
      -cacert "$PKI/ca.pem" -payload-file "$OUT/body.bin" -content-type application/octet-stream \
      -H "Inference-Header-Content-Length: $HLEN" -json "$f.json" "https://$HTTP/v2/models/null/infer" ;;
    ghz-tls-c32) timed ghz "$1" ghz --cacert "$PKI/ca.pem" --proto kserve/inferencepb/inference.proto \
      --call inference.GRPCInferenceService/ModelInfer -c "$CONNS" -z "${DURATION}s" \
      -D "$OUT/ghz.json" --format json -o "$f.json" "$GRPC" ;;
    ghz-c32) timed ghz "$1" ghz --insecure --proto kserve/inferencepb/inference.proto \
      --call inference.GRPCInferenceService/ModelInfer -c "$CONNS" -z "${DURATION}s" \
      -D "$OUT/ghz.json" --format json -o "$f.json" "$GRPC" ;;
    nlg-llm-sse) nlg "$1" Server "http://$HTTP" --api openai-chat --target-qps "$QPS" \
      --input-tokens 128 --output-tokens 256 ;;
    nlg-llm-grpc) nlg "$1" Server "grpc://$GRPC" --api kserve-stream --target-qps "$QPS" \
      --input-tokens 128 --output-tokens 256 ;;
    nlg-llm-grpc-go) nlg "$1" Server "grpc://$GRPC" --api kserve-stream --target-qps "$QPS" \
      --input-tokens 128 --output-tokens 256 --grpc-client grpc ;;
    *) echo "unknown row $1" >&2; return 1 ;;
  esac
}

{
  echo "date: $(date -u +%FT%TZ)  mode: $MODE  qps: $QPS  duration: ${DURATION}s  repeat: $REPEAT  conns: $CONNS"
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(uname -r), $(go version)"
  echo "netloadgen: $(git describe --always --dirty)  wrk: $(wrk -v 2>&1 | head -1)  wrk2: $(${WRK2:-wrk2} -v 2>&1 | head -1)  fortio: $(fortio version 2>&1 | head -1)  ghz: $(ghz --version 2>&1)"
} | tee "$OUT/header.txt"
printf 'target\trow\trep\tverdict\trate\tp50_ms\tp99_ms\tlate_p99_ms\tcompleted\tcpu_s\trss_mib\tsteady_cpu_s\tsteady_window_s\trunq_delay_ms\tsteal_pct\n' >"$TSV"

for target in $TARGETS; do
  start_target "$target"
  for rep in $(seq "$REPEAT"); do
    case $MODE in
      table | tls | llm) for r in $ROWS; do row "$r"; done ;;
      wrk2) for q in $WRK2_RATES; do
          # The rows of a rate go in turn, each repeat starting one further
          # on: with LOADGEND_BEFORE (another loadgend build) a third row,
          # nlg-before-rQ, runs it the same way.
          set -- "nlg-http-bin-r$q" "wrk2-r$q"
          if [ -n "${LOADGEND_BEFORE:-}" ]; then set -- "$@" "nlg-before-r$q"; fi
          for _ in $(seq $(((rep - 1) % $#))); do set -- "${@:2}" "$1"; done
          for r in "$@"; do
            printf '%s\t%s\t%s\t%s\n' "$target" "$r" "$rep" "$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/load.tsv"
            QPS=$q row "$r"
          done
        done ;;
      sweep) for q in $RATES; do nlg "nlg-http-bin-$q" Server "http://$HTTP" --target-qps "$q"; done ;;
      idle) DURATION=20 nlg nlg-http-bin-100 Server "http://$HTTP" --target-qps 100
        DURATION=20 nlg nlg-grpc-100 Server "grpc://$GRPC" --target-qps 100 ;;
    esac
  done
  stop_target
done
python3 bench/peers_parse.py table "$TSV" | tee "$OUT/table.md"
if [ "$MODE" = table ] || [ "$MODE" = tls ]; then python3 bench/peers_parse.py pairs "$TSV" | tee "$OUT/pairs.md"; fi
if [ "$MODE" = wrk2 ]; then python3 bench/peers_parse.py wrk2 "$TSV" "$OUT/load.tsv" | tee "$OUT/wrk2.md"; fi
if [ "$MODE" = llm ]; then python3 bench/peers_parse.py tokens "$TSV" | tee "$OUT/tokens.md"; fi

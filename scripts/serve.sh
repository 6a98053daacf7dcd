#!/usr/bin/env bash
# make serve: sutproxy (simulated models) and the loadgend daemon in the
# foreground on fixed loopback addresses, so the README's curl session can be
# pasted verbatim in a second terminal. Ctrl-C (or SIGTERM) stops both.
#
# Addresses (defaults are the binaries' own defaults, which the README uses):
#   SERVE_API_ADDR  loadgend's control API  127.0.0.1:8080
#   SERVE_SUT_HTTP  sutproxy's HTTP (REST)  127.0.0.1:8000
#   SERVE_SUT_GRPC  sutproxy's gRPC         127.0.0.1:8001
#   SERVE_DATA_DIR  loadgend's run history  a new directory under $TMPDIR
# Other LOADGEND_* variables pass through to loadgend (docs/daemon.md: Configuration).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin}
API_ADDR=${SERVE_API_ADDR:-127.0.0.1:8080}
SUT_HTTP=${SERVE_SUT_HTTP:-127.0.0.1:8000}
SUT_GRPC=${SERVE_SUT_GRPC:-127.0.0.1:8001}
DATA_DIR=${SERVE_DATA_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/netloadgen-serve.XXXXXX")}

for b in loadgend sutproxy; do
  if [ ! -x "$BIN/$b" ]; then
    echo "serve: $BIN/$b is missing: run 'make serve' (it builds first) or 'make build'" >&2
    exit 2
  fi
done

# A fixed port that something already listens on would make a binary fail
# with a bind error after the other started; say which one, before starting.
busy() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
for pair in "SERVE_SUT_HTTP=$SUT_HTTP" "SERVE_SUT_GRPC=$SUT_GRPC" "SERVE_API_ADDR=$API_ADDR"; do
  addr=${pair#*=}
  if busy "$addr"; then
    echo "serve: $addr is already in use (another 'make serve'?); stop that or choose another address: ${pair%%=*}=127.0.0.1:PORT make serve" >&2
    exit 2
  fi
done

pids=()
stop_all() {
  # SIGINT is what loadgend and sutproxy take as "stop gracefully". After a
  # terminal's Ctrl-C they may have it already; a second one is ignored.
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  # A second Ctrl-C interrupts wait, not the shutdown: wait again.
  for p in "${pids[@]}"; do
    while kill -0 "$p" 2>/dev/null; do wait "$p" 2>/dev/null || true; done
  done
}
trap stop_all EXIT

# died NAME PID: report a child that exited before it was ready.
died() {
  local rc=0
  wait "$2" || rc=$?
  echo "serve: $1 exited with status $rc before it was ready (see its messages above)" >&2
  exit 2
}

ready_file="$DATA_DIR/.sutproxy-ready.json"
mkdir -p "$DATA_DIR"
rm -f "$ready_file"
"$BIN/sutproxy" --http-addr "$SUT_HTTP" --grpc-addr "$SUT_GRPC" --ready-file "$ready_file" --log-level warn &
pids+=($!)
for _ in $(seq 200); do
  [ -s "$ready_file" ] && break
  kill -0 "${pids[0]}" 2>/dev/null || died sutproxy "${pids[0]}"
  sleep 0.05
done
[ -s "$ready_file" ] || { echo "serve: sutproxy did not start within 10 s" >&2; exit 2; }

LOADGEND_LISTEN=$API_ADDR LOADGEND_DATA_DIR=$DATA_DIR "$BIN/loadgend" &
pids+=($!)
up=
for _ in $(seq 200); do
  if curl -sf -o /dev/null "http://$API_ADDR/healthz"; then up=1; break; fi
  kill -0 "${pids[1]}" 2>/dev/null || died loadgend "${pids[1]}"
  sleep 0.05
done
[ -n "$up" ] || { echo "serve: loadgend did not answer /healthz within 10 s" >&2; exit 2; }

cat <<EOF

sutproxy (pid ${pids[0]}): KServe v2 on http://$SUT_HTTP and grpc://$SUT_GRPC
loadgend (pid ${pids[1]}): control API on http://$API_ADDR, runs under $DATA_DIR
In another terminal, from the repository's root, paste:

export API=http://$API_ADDR
export SUT=http://$SUT_HTTP
export SUT_GRPC=grpc://$SUT_GRPC

Send request bodies with -H 'Content-Type: application/json': loadgend refuses
other types, and requests from web pages (docs/daemon.md: Security).
Ctrl-C stops both.
EOF

# Until a signal, or until one of them exits on its own (then stop the other).
signalled=
trap 'signalled=1' INT TERM
rc=0
wait -n "${pids[@]}" || rc=$?
stop_all
trap - EXIT
if [ -z "$signalled" ]; then
  echo "serve: a server exited on its own (status $rc); stopped the other" >&2
  exit 1
fi
echo "serve: stopped sutproxy and loadgend"

#!/usr/bin/env bash
# Are a run's files the same at two commits? (issue 28: "logs, result.json
# and samples.txt byte-identical, timing values aside")
#
#   bench/same-files.sh OLD [NEW]     # NEW defaults to the work tree
#
# Runs pkg/runlog TestRunFilesForDiff (runs on a virtual clock, so every
# latency is the same from one run to the next) at both commits, then
# compares every file after blanking what is wall-clock time: dates, pid/tid,
# the hlog's start time, power_begin/power_end. The test file is taken from
# the work tree, so OLD need not have it. Differences left are printed; the
# error messages a failing run keeps (the first max_error_messages, in
# completion order) may differ between two runs of the same commit, as the
# in-memory SUT answers on goroutines.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/same-files.sh OLD [NEW]}
new=${2:-}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; [ -n "$new" ] && git worktree remove --force "$tmp/new" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
files() { # tree out
  [ "$1" = . ] || [ -f "$1/pkg/runlog/runfiles_test.go" ] || cp pkg/runlog/runfiles_test.go "$1/pkg/runlog/zz_runfiles_test.go"
  (cd "$1" && NETLOADGEN_RUN_FILES_DIR="$2" go test -count=1 -run TestRunFilesForDiff ./pkg/runlog/ >/dev/null)
  [ "$1" = . ] || rm -f "$1/pkg/runlog/zz_runfiles_test.go"
}
git worktree add -q "$tmp/old" "$old"
files "$tmp/old" "$tmp/a"
if [ -n "$new" ]; then git worktree add -q "$tmp/new" "$new"; files "$tmp/new" "$tmp/b"; else files . "$tmp/b"; fi
norm() { sed -E 's/"pid": [0-9]+, "tid": [0-9]+//; s/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z//g; s/(StartTime|BaseTime): [0-9]+//;
  s/"value": "[0-9]{2}-[0-9]{2}-[0-9]{4} [0-9:.]+"/"value": ""/' "$1"; }
same=0 differ=0
for f in $(cd "$tmp/a" && find . -type f | sort); do
  if cmp -s <(norm "$tmp/a/$f") <(norm "$tmp/b/$f"); then same=$((same + 1)); else differ=$((differ + 1)); echo "differs: $f"; diff <(norm "$tmp/a/$f") <(norm "$tmp/b/$f") | head -6 || true; fi
done
echo "$same files the same, $differ differ ($old vs ${new:-work tree})"

#!/bin/sh
# Event-stream subscribers must not slow a run (issue 26 #10): Server runs
# of 2,000 QPS for 10 s by loadgend (its own process) alternate without and
# with 1,000 subscribers to the run's events that never read, under
# LOADGEND_MAX_EVENT_STREAMS=1000 (the attack) and under the default (64:
# the rest refused). Each run's issue lateness p99 is a FIGURE line.
# sutproxy and the subscribers run in the test process, all on 127.0.0.1.
# About 3 minutes. NETLOADGEN_EVENTS_BENCH_{QPS,SECONDS,SUBS,PAIRS} size it;
# NETLOADGEN_EVENTS_BENCH_LIMITS=1000 leaves out the default daemon.
set -eu
cd "$(dirname "$0")/.."
NETLOADGEN_EVENTS_BENCH=1 go test -count=1 -v -timeout 30m -run 'TestEventSubscribersDuringARun' ./pkg/daemon/ 2>&1 |
	tee "${BENCH_OUT:-/tmp/event-subscribers-bench.txt}" | grep -E 'FIGURE|^(---|===|ok|FAIL|PASS)'

#!/usr/bin/env bash
# grpc_lifecycle.sh — SIGTERM drain and grace period, SIGHUP reload.
#   SIGTERM with --drain-ms: health turns NOT_SERVING at once while calls are still answered;
#   then a stream still open after --grace-ms is cancelled, the server prints its counters and
#   exits 0. SIGHUP without --model is ignored (the server keeps serving).
set -eu
. tests/py/grpc_lib.bash
grpc_setup

start_server drain --drain-ms 1500 --grace-ms 1000
suite long-stream "$ADDR" > "$TMPDIR/long.out" 2>&1 &
LONG=$!
sleep 0.5
kill -HUP "$SPID"               # no --model: ignored
sleep 0.2
kill -0 "$SPID" || { echo "FAIL SIGHUP without a model killed the server"; exit 1; }
grep -q 'SIGHUP ignored' "$SLOG" || { echo "FAIL no SIGHUP message"; cat "$SLOG"; exit 1; }
echo "ok   SIGHUP without --model is ignored"
t0=$(date +%s.%N)
kill -TERM "$SPID"
sleep 0.3
suite drain "$ADDR"             # within the 1.5 s drain
rc=0; wait "$SPID" || rc=$?
SPID=""
t1=$(date +%s.%N)
check_log "$SLOG"
[ $rc = 0 ] || { echo "FAIL exit $rc after SIGTERM"; cat "$SLOG"; exit 1; }
el=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
awk -v e="$el" 'BEGIN{exit !(e >= 2.3 && e < 8)}' || { echo "FAIL shutdown took ${el}s (drain 1.5 + grace 1.0)"; exit 1; }
echo "ok   exit 0 after drain and grace (${el}s)"
wait "$LONG" || { echo "FAIL long stream:"; cat "$TMPDIR/long.out"; exit 1; }
cat "$TMPDIR/long.out"
grep -q 'cancelled 1 calls' "$SLOG" || { echo "FAIL no cancellation reported"; cat "$SLOG"; exit 1; }
echo "ok   the open stream was cancelled at the end of the grace period"

# SIGTERM with nothing running exits promptly; a second server on the same port works after
start_server quick --grace-ms 5000
t0=$(date +%s.%N)
stop_server
el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
awk -v e="$el" 'BEGIN{exit !(e < 3)}' || { echo "FAIL idle shutdown took ${el}s"; exit 1; }
echo "ok   idle shutdown in ${el}s"

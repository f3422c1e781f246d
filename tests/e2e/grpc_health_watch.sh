#!/usr/bin/env bash
# grpc_health_watch.sh — grpc.health.v1.Health/Watch from Debian's python3-grpcio.
#   The current status at once; SERVICE_UNKNOWN (call kept open) for an unknown service; one
#   message while the status holds; deadlines and client cancellations end watches and are
#   counted by Stats; then, across SIGTERM with --drain-ms, every open watch gets NOT_SERVING
#   when the drain begins and ends UNAVAILABLE at shutdown, without holding up the grace
#   period (the server exits long before drain + grace).
set -eu
. tests/py/grpc_lib.bash
grpc_setup

start_server watch --threads 2
suite watch "$ADDR" -n 50
stop_server

start_server drain --threads 2 --drain-ms 1500 --grace-ms 20000
suite watch-drain "$ADDR" -n 4 --ready-file "$TMPDIR/ready" > "$TMPDIR/watch.out" 2>&1 &
W=$!
for _ in $(seq 1 200); do [ -e "$TMPDIR/ready" ] && break; sleep 0.05; done
[ -e "$TMPDIR/ready" ] || { echo "FAIL the watches did not start"; cat "$TMPDIR/watch.out"; exit 1; }
t0=$(date +%s.%N)
kill -TERM "$SPID"
rc=0; wait "$SPID" || rc=$?
SPID=""
el=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
check_log "$SLOG"
[ $rc = 0 ] || { echo "FAIL exit $rc after SIGTERM"; cat "$SLOG"; exit 1; }
wait "$W" || { echo "FAIL watches across the drain:"; cat "$TMPDIR/watch.out"; cat "$SLOG"; exit 1; }
cat "$TMPDIR/watch.out"
awk -v e="$el" 'BEGIN{exit !(e >= 1.4 && e < 6)}' || { echo "FAIL shutdown took ${el}s (drain 1.5 s; open watches must not wait for the 20 s grace)"; exit 1; }
echo "ok   exit 0 after the drain, open watches did not hold up the grace period (${el}s)"
grep -q 'Health/Watch *UNAVAILABLE *4' "$SLOG" || { echo "FAIL counters do not show 4 watches ended UNAVAILABLE"; cat "$SLOG"; exit 1; }
echo "ok   the counters show the 4 watches ended UNAVAILABLE"

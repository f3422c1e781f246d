#!/usr/bin/env bash
# serve_port.sh — `gyro serve` owns its port alone: with --addr HOST:0 and several threads it
# listens on exactly one socket (gRPC core's SO_REUSEPORT default gave one ephemeral port per
# completion queue), and a second server on a busy port fails at once with exit 1 and a clear
# message instead of starting silently and taking half of the calls.
set -eu
. tests/py/grpc_lib.bash
command -v ss > /dev/null || { echo "ss (iproute2) not installed"; exit 77; }
[ -x "$GYRO" ] || { echo "no gyro binary at $GYRO"; exit 1; }

start_server first --threads 4 --pool 2
n=$(ss -ltnpH | grep -c "pid=$SPID,") || true
[ "$n" = 1 ] || { echo "FAIL --addr 127.0.0.1:0 --threads 4 listens on $n sockets:"; ss -ltnpH | grep "pid=$SPID,"; exit 1; }
echo "ok   one listening socket for 4 threads (port $PORT)"

rc=0
timeout 20 "$GYRO" serve --addr "127.0.0.1:$PORT" --threads 2 2> "$TMPDIR/second.log" || rc=$?
[ "$rc" = 1 ] || { echo "FAIL a second server on busy port $PORT: exit $rc (want 1)"; cat "$TMPDIR/second.log"; exit 1; }
grep -q "cannot listen on 127.0.0.1:$PORT.*in use" "$TMPDIR/second.log" \
  || { echo "FAIL no clear message:"; cat "$TMPDIR/second.log"; exit 1; }
echo "ok   a second server on port $PORT exits 1: $(grep "gyro serve" "$TMPDIR/second.log")"
kill -0 "$SPID" || { echo "FAIL the first server died"; exit 1; }
stop_server

#!/usr/bin/env bash
# grpc_service.sh — every method and every status code of `gyro serve` from a Python client:
# health, UNAVAILABLE without a model, INVALID_ARGUMENT (garbage, truncated, invalid UTF-8,
# mid-stream), UNIMPLEMENTED, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, cancellation, Stats; the
# C client; usage errors; and a clean SIGTERM exit.
set -eu
. tests/py/grpc_lib.bash
grpc_setup

# usage errors
rc=0; "$GYRO" serve --bogus 2>/dev/null || rc=$?; [ $rc = 2 ] || { echo "FAIL serve --bogus exit $rc"; exit 1; }
rc=0; "$GYRO" serve --threads 0 2>/dev/null || rc=$?; [ $rc = 2 ] || { echo "FAIL serve --threads 0 exit $rc"; exit 1; }
rc=0; "$GYRO" serve --tls-cert x 2>/dev/null || rc=$?; [ $rc = 2 ] || { echo "FAIL --tls-cert alone exit $rc"; exit 1; }
rc=0; "$GYRO" client 2>/dev/null || rc=$?; [ $rc = 2 ] || { echo "FAIL client without subcommand exit $rc"; exit 1; }
"$GYRO" serve --help | grep -- --max-request-bytes > /dev/null
"$GYRO" client --help | grep -- --stream > /dev/null
# a model file that does not exist / is garbage: refuse to start
rc=0; "$GYRO" serve --addr 127.0.0.1:0 --model "$TMPDIR/none.model" 2>/dev/null || rc=$?
[ $rc = 1 ] || { echo "FAIL missing model exit $rc"; exit 1; }
head -c 300 /dev/urandom > "$TMPDIR/garbage.model"
rc=0; "$GYRO" serve --addr 127.0.0.1:0 --model "$TMPDIR/garbage.model" 2>/dev/null || rc=$?
[ $rc != 0 ] || { echo "FAIL garbage model accepted"; exit 1; }
rc=0; "$GYRO" serve --addr 127.0.0.1:0 --policy "$TMPDIR/garbage.model" 2>/dev/null || rc=$?
[ $rc != 0 ] || { echo "FAIL garbage policy accepted"; exit 1; }
rc=0; "$GYRO" serve --addr 127.0.0.1:0 --embeddings "$TMPDIR/garbage.model" 2>/dev/null || rc=$?
[ $rc != 0 ] || { echo "FAIL garbage embedding table accepted"; exit 1; }
echo "ok   usage errors and unloadable models, policies and tables"

MAXB=65536
start_server main --threads 2 --pool 0 --max-request-bytes $MAXB --grace-ms 2000   # handlers on the queue threads
suite functional "$ADDR" --max-bytes $MAXB

# the C client
[ "$("$GYRO" client --addr "$ADDR" health)" = SERVING ]
rc=0; "$GYRO" client --addr "$ADDR" health nope 2>"$TMPDIR/err" || rc=$?
[ $rc = 1 ] && grep -q NOT_FOUND "$TMPDIR/err" || { echo "FAIL client health nope: $rc"; exit 1; }
rc=0; "$GYRO" client --addr "$ADDR" classify "播放周杰伦的歌" 2>"$TMPDIR/err" || rc=$?
[ $rc = 1 ] && grep -q UNAVAILABLE "$TMPDIR/err" || { echo "FAIL client classify without model: $rc"; exit 1; }
rc=0; printf 'a\nb\n' | "$GYRO" client --addr "$ADDR" classify --stream 2>"$TMPDIR/err" >/dev/null || rc=$?
[ $rc = 1 ] && grep -q UNAVAILABLE "$TMPDIR/err" || { echo "FAIL client classify --stream without model: $rc"; exit 1; }
[ "$("$GYRO" client --addr "$ADDR" normalize '學生們 ＡＢＣ')" = "学生们 ABC" ] || { echo "FAIL client normalize"; exit 1; }
[ "$(printf '體育\n\nx' | "$GYRO" client --addr "$ADDR" normalize --keep-traditional | tr '\n' '|')" = "體育||x|" ] \
  || { echo "FAIL client normalize from stdin"; exit 1; }
"$GYRO" client --addr "$ADDR" stats > "$TMPDIR/stats"
grep -q $'count\t/grpc.health.v1.Health/Check\tOK' "$TMPDIR/stats" || { echo "FAIL stats"; cat "$TMPDIR/stats"; exit 1; }
# nothing listening: UNAVAILABLE, exit 1, no hang
rc=0; timeout 20 "$GYRO" client --addr 127.0.0.1:1 --timeout-ms 2000 health 2>/dev/null || rc=$?
[ $rc = 1 ] || { echo "FAIL client against a closed port: exit $rc"; exit 1; }
echo "ok   C client: health, classify, stream, normalize, stats, closed port"

stop_server
grep -q 'calls by method and status' "$SLOG" || { echo "FAIL no counters at shutdown"; cat "$SLOG"; exit 1; }
grep -q 'UNIMPLEMENTED' "$SLOG" || { echo "FAIL counters lack UNIMPLEMENTED"; cat "$SLOG"; exit 1; }
echo "ok   counters printed at shutdown"

#!/usr/bin/env bash
# serve_signals.sh — SIGHUP and SIGTERM never kill `gyro serve`: every thread of the server
# (OpenBLAS's, started by its library constructor before main, included) blocks SIGHUP, SIGINT
# and SIGTERM, so they are only taken by the signal thread's sigwait. Checked on the thread
# masks in /proc/PID/task, then with two SIGHUPs in a row, and with SIGHUP, SIGHUP, SIGTERM sent
# while a reload is blocked opening a FIFO given as the model path.
set -eu
. tests/py/grpc_lib.bash
[ -x "$GYRO" ] || { echo "no gyro binary at $GYRO"; exit 1; }
T=$TMPDIR
printf '播放周杰伦的歌\tmusic.play\n放首歌\tmusic.play\n今天天气\tweather.query\n明天下雨吗\tweather.query\n' > "$T/d.tsv"
"$GYRO" import -f tsv -q -o "$T/d.pb" "$T/d.tsv"
"$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 1 --dev-fraction 0 --quiet -o "$T/m.clf" "$T/d.pb"
alive() { kill -0 "$SPID" 2> /dev/null || { echo "FAIL the server died ($1):"; cat "$SLOG"; SPID=""; exit 1; }; }

# ---- 1. the thread masks: every thread but the one in sigwait blocks HUP (1), INT (2), TERM (15)
start_server masks --model "$T/m.clf" --threads 2 --pool 2
sleep 0.3
n=0
for task in /proc/$SPID/task/*; do
  tid=${task##*/}
  [ "$tid" = "$SPID" ] && continue          # the main thread: its mask is lifted inside sigwait
  n=$((n + 1))
  blk=$(awk '/^SigBlk/{print $2}' "$task/status")
  (( (0x$blk & 0x4003) == 0x4003 )) \
    || { echo "FAIL thread $tid ($(cat "$task/comm")) does not block SIGHUP/SIGINT/SIGTERM: SigBlk $blk"; exit 1; }
done
echo "ok   all $n other threads block SIGHUP, SIGINT and SIGTERM"

# ---- 2. two SIGHUPs in a row ----------------------------------------------------------------------
kill -HUP "$SPID"; kill -HUP "$SPID"
sleep 1
alive "two SIGHUPs"
grep -q 'reloaded' "$SLOG" || { echo "FAIL no reload after SIGHUP"; cat "$SLOG"; exit 1; }
echo "ok   two SIGHUPs in a row: still serving"
stop_server

# ---- 3. SIGHUP, SIGHUP, SIGTERM while a reload blocks on a FIFO -------------------------------------
mkfifo "$T/model.fifo"
feed() { timeout 20 cp "$T/m.clf" "$T/model.fifo" || { echo "FAIL nobody opened the FIFO ($1)"; exit 1; }; }
feed start &
FEED=$!
start_server fifo --model "$T/model.fifo"
wait $FEED
kill -HUP "$SPID"           # the reload now blocks in open() of the FIFO
sleep 0.5
kill -HUP "$SPID"; kill -TERM "$SPID"
sleep 0.5
alive "SIGHUP and SIGTERM during a blocked reload"
feed "first reload"          # first reload completes; the pending SIGHUP starts a second one
feed "second reload"
rc=0
for _ in $(seq 1 100); do kill -0 "$SPID" 2> /dev/null || break; sleep 0.1; done
wait "$SPID" || rc=$?
SPID=""
check_log "$SLOG"
[ "$rc" = 0 ] || { echo "FAIL exit $rc after the pending SIGTERM"; cat "$SLOG"; exit 1; }
[ "$(grep -c 'reloaded' "$SLOG")" = 2 ] || { echo "FAIL want 2 reloads:"; cat "$SLOG"; exit 1; }
echo "ok   a blocked reload: both SIGHUPs reloaded, then the pending SIGTERM exited 0"

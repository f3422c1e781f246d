#!/usr/bin/env bash
# classify_interrupt.sh — SIGINT during `gyro classify train` stops after the current step with
# exit status 130, and the checkpoint holds a usable model.
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
cd "$TMPDIR"
for i in $(seq 1 40); do printf '播放第%d首歌\tmusic.play\n暂停%d秒\tmusic.pause\n' "$i" "$i"; done > d.tsv
"$GYRO" import -f tsv -q -o d.pb d.tsv || exit 1
"$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 100000 --patience 0 --quiet \
  --checkpoint ck.clf -o final.clf d.pb 2> err.txt &
pid=$!
sleep 1.5
kill -INT $pid
wait $pid; rc=$?
[ $rc = 130 ] || { echo "exit $rc, want 130"; cat err.txt; exit 1; }
grep -q interrupted err.txt || { echo "no message"; cat err.txt; exit 1; }
[ ! -e final.clf ] || { echo "an interrupted run wrote the final model"; exit 1; }
echo 播放 | "$GYRO" classify predict -m ck.clf | grep -q '"label":"music.p' || { echo "checkpoint unusable"; exit 1; }
echo ok

#!/usr/bin/env bash
# classify_interrupt.sh — SIGINT during `gyro classify train` stops after the current step with
# exit status 130, and the checkpoint holds a usable model; without --checkpoint the best model
# so far goes to -o (it used to write nothing).
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

# without --checkpoint: SIGTERM once an epoch has been logged, the best model so far is in -o
"$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 100000 --patience 0 \
  -o best.clf d.pb 2> err2.txt &
pid=$!
for _ in $(seq 1 1200); do grep -q '^epoch 1:' err2.txt 2> /dev/null && break; sleep 0.05; done
grep -q '^epoch 1:' err2.txt || { kill -9 $pid; cat err2.txt; echo "no epoch logged"; exit 1; }
kill -TERM $pid
wait $pid; rc=$?
[ $rc = 130 ] || { echo "SIGTERM without --checkpoint: exit $rc, want 130"; cat err2.txt; exit 1; }
grep -q "the best model so far is in best.clf" err2.txt || { echo "no message"; cat err2.txt; exit 1; }
echo 播放 | "$GYRO" classify predict -m best.clf | grep -q '"label":"music.p' || { echo "-o unusable"; exit 1; }
ls | grep -q '\.tmp\.' && { echo "temporary file left behind"; exit 1; }
echo ok

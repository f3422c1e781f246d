#!/usr/bin/env bash
# classify_nan_checkpoint.sh — a diverging `gyro classify train` (a huge --lr) stops with exit 1,
# names the tensor that went non-finite first, and leaves a good checkpoint byte for byte.
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
cd "$TMPDIR"
for i in $(seq 1 40); do printf '播放第%d首歌\tmusic.play\n暂停%d秒\tmusic.pause\n' "$i" "$i"; done > d.tsv
"$GYRO" import -f tsv -q -o d.pb d.tsv || exit 1
"$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 2 --quiet --checkpoint ck.clf -o good.clf d.pb \
  || { echo "the good run failed"; exit 1; }
cp ck.clf ck.orig
# one step per epoch (--batch over the set size): the diverged parameters reach the end of the
# epoch, where the checkpoint used to be rewritten with them
for batch in 128 8; do
  "$GYRO" classify train --dim 8 --layers 1 --heads 2 --epochs 3 --batch $batch --quiet --lr 3e38 \
    --checkpoint ck.clf -o bad.clf d.pb 2> err.txt
  rc=$?
  [ $rc = 1 ] || { echo "batch $batch: exit $rc, want 1"; cat err.txt; exit 1; }
  cmp -s ck.clf ck.orig || { echo "batch $batch: the good checkpoint was overwritten"; cat err.txt; exit 1; }
  grep -q 'tensor [a-z_0-9]* became non-finite' err.txt || { echo "batch $batch: no tensor named"; cat err.txt; exit 1; }
  [ ! -e bad.clf ] || { echo "batch $batch: a diverged final model was written"; exit 1; }
done
echo 播放 | "$GYRO" classify predict -m ck.clf | grep -q '"label":"music.p' || { echo "checkpoint unusable"; exit 1; }
echo ok

#!/usr/bin/env bash
# classify_threads.sh — `gyro classify train --threads N`: --threads 1 is the default loop bit for
# bit, two threads are reproducible from the seed and reach the dev accuracy of one thread
# (within 10 points, both >= 90%, on a held-out dev file), more threads than a batch holds work,
# and a thread count outside [1, 64] is a usage error.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
# shellcheck source=tests/e2e/lib/intents.sh
. "$(dirname "$0")/lib/intents.sh"
cd "$TMPDIR"

intents_split_data

opts=(--dim 16 --layers 2 --heads 2 --epochs 12 --batch 16 --optimizer adam --lr 0.01 --dev dev.pb --seed 5)
"$GYRO" classify train "${opts[@]}" --quiet -o default.clf train.pb
"$GYRO" classify train "${opts[@]}" --quiet --threads 1 -o j1.clf train.pb
cmp default.clf j1.clf                          # --threads 1 is the default, bit for bit
"$GYRO" classify train "${opts[@]}" -j 2 -o j2.clf train.pb 2> j2.log
"$GYRO" classify train "${opts[@]}" -j 2 --quiet -o j2b.clf train.pb
cmp j2.clf j2b.clf                              # reproducible for a thread count and seed
"$GYRO" classify train "${opts[@]}" -j 20 --batch 8 --quiet -o j20.clf train.pb  # idle shards

acc() { "$GYRO" classify eval -m "$1" dev.pb | awk '/^accuracy:/ {gsub("%","",$2); print $2}'; }
a1=$(acc j1.clf) a2=$(acc j2.clf) a20=$(acc j20.clf)
echo "dev accuracy: 1 thread $a1%, 2 threads $a2%, 20 threads (batch 8) $a20%"
awk -v a="$a1" -v b="$a2" -v c="$a20" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a >= 90 && b >= 90 && c >= 90 && d <= 10) }' \
  || { echo "accuracies out of range"; cat j2.log; exit 1; }

for bad in 0 65 x; do
  rc=0; "$GYRO" classify train "${opts[@]}" -j "$bad" -o bad.clf train.pb 2> bad.err || rc=$?
  [ "$rc" = 2 ] || { echo "--threads $bad: exit $rc, wanted 2"; cat bad.err; exit 1; }
  grep -q threads bad.err
  [ ! -e bad.clf ]
done
echo ok

#!/usr/bin/env bash
# classify_autotune.sh — `gyro classify autotune`: a short search on a small generated set
# writes the best model and prints the classify train command line that trains it (which,
# run, gives the same dev accuracy); trial 1 is the defaults, so the best is never below them;
# a budget shorter than one trial and a missing --dev are clear errors that write nothing.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
# shellcheck source=tests/e2e/lib/intents.sh
. "$(dirname "$0")/lib/intents.sh"
cd "$TMPDIR"
gen_intents > data.tsv
"$GYRO" import -f tsv -q -o all.pb data.tsv
"$GYRO" split -q --seed 2 --dev 0.25 -t train.pb -v dev.pb all.pb

"$GYRO" classify autotune --budget 5m --trials 3 --dev dev.pb -o best.clf train.pb > cmd.txt 2> log.txt
[ "$(grep -c '^trial [0-9]*: dev accuracy' log.txt)" = 3 ] || { echo "FAIL trial lines"; cat log.txt; exit 1; }
grep -q '^trial 1: .*--geometry hyperbolic --lr 0.5 --head-lr 0.1 --dim 100 --epochs 25 ' log.txt    # the defaults first
grep -q '^gyro classify train --geometry .* --dev dev.pb -o best.clf train.pb$' cmd.txt
best=$(sed -n 's/.*best: trial [0-9]*, dev accuracy \([0-9.]*\)%.*/\1/p' log.txt)
first=$(sed -n 's/.*(the defaults: \([0-9.]*\)%).*/\1/p' log.txt)
awk -v b="$best" -v f="$first" 'BEGIN { exit !(b >= f) }' || { echo "FAIL best $best below the defaults $first"; exit 1; }
"$GYRO" classify eval -m best.clf dev.pb > eval.txt
grep -q '^model: ngrams-' eval.txt
# the printed command line trains the same model again
read -r -a again < <(sed 's/-o best.clf/-o again.clf/; s/^gyro //' cmd.txt)
"$GYRO" "${again[@]}" --quiet
cmp best.clf again.clf || { echo "FAIL the printed command line does not give the same model"; exit 1; }

# a budget too short for one trial: exit 65, the time of one trial named, nothing written
st=0; "$GYRO" classify autotune --budget 0.001 --dev dev.pb -o none.clf train.pb > /dev/null 2> err.txt || st=$?
[ "$st" = 65 ] || { echo "FAIL tiny budget: exit $st"; cat err.txt; exit 1; }
grep -q 'more than the budget' err.txt
[ ! -e none.clf ]
st=0; "$GYRO" classify autotune -o none.clf train.pb 2> err.txt || st=$?
[ "$st" = 2 ] && grep -q -- '--dev' err.txt
st=0; "$GYRO" classify autotune --budget 10x --dev dev.pb -o none.clf train.pb 2> err.txt || st=$?
[ "$st" = 2 ] && grep -q -- '--budget' err.txt
[ ! -e none.clf ]
echo ok

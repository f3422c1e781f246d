#!/usr/bin/env bash
# classify_train_predict.sh — `gyro classify train|eval|predict` end to end on a small generated
# set: import TSV, train a tiny hyperbolic model, evaluate it (text report and SVG), predict
# from text lines, from a Document stream made by `gyro normalize` and as a ClassifyResponse
# stream; training is reproducible from the seed.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
# shellcheck source=tests/e2e/lib/intents.sh
. "$(dirname "$0")/lib/intents.sh"
cd "$TMPDIR"

# three intents told apart by their words, with varied fillers
intents_data

opts=(--dim 16 --layers 1 --heads 2 --epochs 15 --batch 16 --optimizer adam --lr 0.01 --dev-fraction 0.2 --seed 5 --quiet)
"$GYRO" classify train "${opts[@]}" -o m1.clf data.pb
"$GYRO" classify train "${opts[@]}" -o m2.clf data.pb
cmp m1.clf m2.clf                               # same seed, same bytes

"$GYRO" classify eval -m m1.clf --svg cm.svg data.pb > report.txt
grep -q '^accuracy:' report.txt
grep -q '^macro-F1:' report.txt
grep -q '^accuracy at level 1:' report.txt
acc=$(awk '/^accuracy:/ {gsub("%","",$2); print $2}' report.txt)
awk -v a="$acc" 'BEGIN { exit !(a >= 90) }' || { echo "accuracy $acc% too low"; cat report.txt; exit 1; }
grep -q '</svg>' cm.svg

printf '播放晴天\n\n导航到机场\n' | "$GYRO" classify predict -m m1.clf -k 2 > out.jsonl
[ "$(wc -l < out.jsonl)" = 3 ]
sed -n 1p out.jsonl | grep -q '"intents":\[{"label":"music.play"'
sed -n 2p out.jsonl | grep -q '"error"'
sed -n 3p out.jsonl | grep -q '"intents":\[{"label":"navigation.navigation"'

# Traditional input is normalized by the model; a Document stream from gyro normalize works too
printf '導航到機場\n' | "$GYRO" normalize 2>/dev/null | "$GYRO" classify predict -m m1.clf > doc.jsonl
grep -q '"text":"导航到机场"' doc.jsonl
grep -q '"label":"navigation.navigation"' doc.jsonl

# an Example stream as input, a ClassifyResponse stream as output
"$GYRO" classify predict -m m1.clf -k 3 --stream -o resp.pb data.pb
head -c 40 resp.pb | grep -aq 'gyro.v1.ClassifyResponse'
echo ok

#!/usr/bin/env bash
# char2vec_train.sh — train char2vec on a small real corpus (fortunes-zh: 唐诗三百首), straight
# and through `gyro normalize |`, with 2 threads; check the table is on the hyperboloid, the
# neighbours, conversion to the ball and back, the exports and the similarity evaluation.
set -euo pipefail
: "${GYRO:?}" "${SHARED:?}"
T=$SHARED/corpora/text/fortunes-zh/tang300
[ -r "$T" ] || { echo "no $T"; exit 77; }
cd "$TMPDIR"
fail() { echo "FAIL: $*"; exit 1; }

"$GYRO" char2vec --help | grep "usage: gyro char2vec train" > /dev/null || fail "help"
"$GYRO" char2vec train --help > /dev/null

# plain text, normalized on the fly; 2 threads; progress line on stderr
"$GYRO" char2vec train --dim 20 --epochs 3 --threads 2 --min-count 3 -o t.hyp "$T" 2> log
grep -q "Progress: 100.0%" log || { cat log; fail "no final progress line"; }
grep -q "chars/sec/thread" log || fail "no rate in progress line"
err=$(sed -n 's/.*max |<x,x>_L + 1| = \([0-9.e+-]*\).*/\1/p' log)
[ -n "$err" ] || { cat log; fail "no manifold measure"; }
awk -v e="$err" 'BEGIN{exit !(e < 1e-5)}' || fail "rows off the manifold: $err"
[ -s t.hyp ] || fail "no output"
[ ! -e t.hyp.ckpt ] && [ ! -e t.hyp.ckpt.ids ] || fail "checkpoint left behind"
ls | grep -q '\.tmp\.' && fail "temporary file left behind"

# the same corpus through gyro normalize (a Document stream on stdin)
"$GYRO" normalize "$T" | "$GYRO" char2vec train -q --dim 20 --epochs 1 --min-count 3 -o s.hyp
[ -s s.hyp ] || fail "no output from the pipeline"

# neighbours: 10 lines per character, increasing distances
"$GYRO" neighbors -t t.hyp -k 10 山 月 > nb
[ "$(wc -l < nb)" = 20 ] || { cat nb; fail "neighbour count"; }
awk -F'\t' '$1=="山" { if (NR>1 && $4 < prev) exit 1; prev=$4 }' nb || fail "neighbours not sorted"
if "$GYRO" neighbors -t t.hyp 𠀀 2> err; then fail "missing character accepted"; fi
grep -q "not in the table" err || fail "missing character message"

# conversion to the ball and back, exports
"$GYRO" convert --to poincare -o t.poi t.hyp 2> log
grep -q "hyperboloid -> poincare" log || fail "convert summary"
"$GYRO" convert --to hyperboloid -o back.hyp t.poi 2> /dev/null
"$GYRO" neighbors -t t.poi -k 3 山 > nb2
cut -f3 nb2 > a; head -3 nb | cut -f3 > b
cmp -s a b || fail "Poincare neighbours differ from hyperboloid neighbours"
"$GYRO" convert --to vec t.poi > t.vec
head -1 t.vec | grep -qE '^[0-9]+ 20$' || fail "vec header"
[ "$(($(wc -l < t.vec) - 1))" = "$(head -1 t.vec | cut -d' ' -f1)" ] || fail "vec rows"
"$GYRO" convert -q --to tsv -o proj t.poi
[ "$(wc -l < proj.vectors.tsv)" = "$(wc -l < proj.metadata.tsv)" ] || fail "tsv pair"

# similarity on the shared benchmark files
S=$SHARED/corpora/similarity
"$GYRO" similarity -t t.hyp "$S/wordsim297/297.txt" > sim
awk -F'\t' '{ if ($3 < 10 || $4 != 297) exit 1 }' sim || { cat sim; fail "similarity coverage"; }

# a picture in the Poincare disk
"$GYRO" plot -t t.hyp -o t.svg --labels 20
grep -q "</svg>" t.svg || fail "svg"
nl=$(grep -c 'class="label"' t.svg)   # the 20 most frequent, less those with no free place
[ "$nl" -ge 10 ] && [ "$nl" -le 20 ] || fail "$nl labels for --labels 20"
grep -q 'labelled: ' t.svg || fail "no legend"
grep -q "projected" t.svg || fail "caption does not say the table was projected"
"$GYRO" char2vec train -q --dim 2 --epochs 1 --min-count 3 -o d2.hyp "$T"
"$GYRO" plot -t d2.hyp -o d2.svg
grep -q "as trained" d2.svg || fail "2-D table not drawn as trained"

# Euclidean twin
"$GYRO" char2vec train -q --geometry euclidean --dim 20 --epochs 1 --min-count 3 -o e.vec.tab "$T"
"$GYRO" neighbors -t e.vec.tab -k 3 山 > /dev/null
if "$GYRO" convert --to poincare -o x e.vec.tab 2> err; then fail "euclidean converted"; fi
echo ok

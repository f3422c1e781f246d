#!/usr/bin/env bash
# char2vec_quality.sh — embedding quality of gyro char2vec, hyperbolic against Euclidean.
#
#   tests/bench/char2vec_quality.sh
#   env: GYRO (binary), WORK (scratch dir), EPOCHS (default 5), DIM (default 100), THREADS (2),
#        LINES (use only the first LINES documents; default all), UPDATES (the --update modes to
#        train with, default "pair"; "pair batch" compares the per-pair update with the window
#        update), SHARE (--share of --update batch, default 0: the whole window),
#        GEOMETRIES (default "hyperbolic euclidean")
#
# Trains on all of ../shared/corpora/text (char2vec_corpus.py extracts the running text; gyro
# normalizes it) with the settings of the issue (window 5, 5 negatives, sample 1e-4,
# min-count 5), once on the hyperboloid and once with --geometry euclidean at equal dimension,
# then reports Spearman's rho on wordsim-297 and COS960 (all, noun, verb, adj) with the pairs
# covered (a word is the gyromidpoint of its characters; mean and cosine for Euclidean), the
# manifold error of the hyperbolic table, and the nearest neighbours of 水 火 爱 听 歌.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
GYRO=${GYRO:-$here/build/gyro}
SHARED=${SHARED:-$here/../shared}
WORK=${WORK:-/tmp/gyro-bench-char2vec}
EPOCHS=${EPOCHS:-5}
DIM=${DIM:-100}
THREADS=${THREADS:-2}
LINES=${LINES:-0}
UPDATES=${UPDATES:-pair}
SHARE=${SHARE:-0}
GEOMETRIES=${GEOMETRIES:-hyperbolic euclidean}
mkdir -p "$WORK"
[ -x "$GYRO" ] || { echo "build gyro first ($GYRO)"; exit 1; }
if [ ! -s "$WORK/corpus.txt" ]; then
  /usr/bin/python3 "$here/tests/bench/char2vec_corpus.py" "$SHARED/corpora/text" > "$WORK/corpus.txt"
fi
input=$WORK/corpus.txt
if [ "$LINES" -gt 0 ]; then head -n "$LINES" "$WORK/corpus.txt" > "$WORK/corpus.part"; input=$WORK/corpus.part; fi
S=$SHARED/corpora/similarity
FILES=("$S/wordsim297/297.txt" "$S/cos960/COS960_all.txt" "$S/cos960/COS960_noun.txt"
       "$S/cos960/COS960_verb.txt" "$S/cos960/COS960_adj.txt")
echo "corpus: $(wc -l < "$input") documents; dim $DIM, $EPOCHS epochs, $THREADS threads"
printf '\n| geometry | update | file | rho | covered / pairs |\n|---|---|---|---|---|\n'
for u in $UPDATES; do
  for g in $GEOMETRIES; do
    nice "$GYRO" char2vec train --geometry "$g" --update "$u" --share "$SHARE" --dim "$DIM" --window 5 --negatives 5 --sample 1e-4 \
      --min-count 5 --epochs "$EPOCHS" --threads "$THREADS" --checkpoint-every 0 \
      -o "$WORK/quality.$g.$u" "$input" 2> "$WORK/quality.$g.$u.log"
    grep "^Wrote" "$WORK/quality.$g.$u.log" | sed "s/^/[$g, $u] /" >&2
    "$GYRO" similarity -t "$WORK/quality.$g.$u" "${FILES[@]}" | while IFS=$'\t' read -r f rho cov n; do
      printf '| %s | %s | %s | %s | %s / %s |\n' "$g" "$u" "$(basename "$f")" "$rho" "$cov" "$n"
    done
  done
done
echo
u=${UPDATES%% *}
for g in $GEOMETRIES; do
  echo "nearest neighbours ($g, $u):"
  "$GYRO" neighbors -t "$WORK/quality.$g.$u" -k 8 水 火 爱 听 歌 |
    awk -F'\t' '{ a[$1] = a[$1] sprintf(" %s(%.2f)", $3, $4) } END { n = split("水 火 爱 听 歌", q, " "); for (i = 1; i <= n; i++) print "  " q[i] ":" a[q[i]] }'
done

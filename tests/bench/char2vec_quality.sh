#!/usr/bin/env bash
# char2vec_quality.sh — embedding quality of gyro char2vec, hyperbolic against Euclidean.
#
#   tests/bench/char2vec_quality.sh
#   env: GYRO (binary), WORK (scratch dir), EPOCHS (default 5), DIM (default 100), THREADS (2),
#        LINES (use only the first LINES documents; default all), UPDATES (the --update modes to
#        train with, default "pair"; "pair batch" compares the per-pair update with the window
#        update; "batch:N" is --update batch --share N), SHARE (--share of a plain "batch",
#        default 0: the whole window), GEOMETRIES (default "hyperbolic euclidean"),
#        SEEDS (default "1"; several seeds run interleaved, seed by seed over every update,
#        and a last table gives each setting's per-seed values and their median)
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
SEEDS=${SEEDS:-1}
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
printf '\n| geometry | update | seed | file | rho | covered / pairs |\n|---|---|---|---|---|---|\n'
: > "$WORK/quality.rho"
for seed in $SEEDS; do
  for uu in $UPDATES; do
    u=${uu%%:*}; sh=$SHARE; [ "$uu" != "$u" ] && sh=${uu#*:}
    for g in $GEOMETRIES; do
      tag=$g.$u.seed$seed; [ "$u" = batch ] && tag=$g.$u.s$sh.seed$seed
      nice "$GYRO" char2vec train --geometry "$g" --update "$u" --share "$sh" --seed "$seed" --dim "$DIM" --window 5 --negatives 5 --sample 1e-4 \
        --min-count 5 --epochs "$EPOCHS" --threads "$THREADS" --checkpoint-every 0 \
        -o "$WORK/quality.$tag" "$input" 2> "$WORK/quality.$tag.log"
      grep "^Wrote" "$WORK/quality.$tag.log" | sed "s/^/[$g, $uu, seed $seed] /" >&2
      "$GYRO" similarity -t "$WORK/quality.$tag" "${FILES[@]}" | while IFS=$'\t' read -r f rho cov n; do
        printf '| %s | %s | %s | %s | %s | %s / %s |\n' "$g" "$uu" "$seed" "$(basename "$f")" "$rho" "$cov" "$n"
        printf '%s\t%s\t%s\t%s\t%s\n' "$g" "$uu" "$seed" "$(basename "$f")" "$rho" >> "$WORK/quality.rho"
      done
    done
  done
done
if [ "$(echo $SEEDS | wc -w)" -gt 1 ]; then
  printf '\nper seed (%s) and median:\n\n| geometry | update | file | per seed | median |\n|---|---|---|---|---|\n' "$SEEDS"
  awk -F'\t' '{ k = $1 "\t" $2 "\t" $4; if (!(k in n)) order[++m] = k; v[k, ++n[k]] = $5 }
    END { for (i = 1; i <= m; i++) { k = order[i]; c = n[k]; s = ""
            for (j = 1; j <= c; j++) { a[j] = v[k, j]; s = s (j > 1 ? " " : "") v[k, j] }
            for (j = 2; j <= c; j++) { x = a[j]; for (l = j - 1; l >= 1 && a[l] > x; l--) a[l + 1] = a[l]; a[l + 1] = x }
            med = c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
            split(k, f, "\t"); printf "| %s | %s | %s | %s | %.4f |\n", f[1], f[2], f[3], s, med } }' "$WORK/quality.rho"
fi
echo
uu=${UPDATES%% *}; u=${uu%%:*}; sh=$SHARE; [ "$uu" != "$u" ] && sh=${uu#*:}
seed=${SEEDS%% *}
for g in $GEOMETRIES; do
  tag=$g.$u.seed$seed; [ "$u" = batch ] && tag=$g.$u.s$sh.seed$seed
  echo "nearest neighbours ($g, $uu, seed $seed):"
  "$GYRO" neighbors -t "$WORK/quality.$tag" -k 8 水 火 爱 听 歌 |
    awk -F'\t' '{ a[$1] = a[$1] sprintf(" %s(%.2f)", $3, $4) } END { n = split("水 火 爱 听 歌", q, " "); for (i = 1; i <= n; i++) print "  " q[i] ":" a[q[i]] }'
done

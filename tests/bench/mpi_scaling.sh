#!/usr/bin/env bash
# mpi_scaling.sh — char2vec over several processes (Open MPI): weak scaling on this machine and
# the embedding quality of 2 ranks against one process.
#
#   tests/bench/mpi_scaling.sh
#   env: GYRO (binary; copy it first if you rebuild meanwhile), WORK (scratch dir), REPS (3),
#        LINES (documents per rank in the weak-scaling runs, 40000 ≈ 1M characters),
#        WEAK_EPOCHS (3), EPOCHS (5, quality), WEAK (1: the weak-scaling runs), QUALITY (1: the
#        quality runs, on all of ../shared/corpora/text as tests/bench/char2vec_quality.sh),
#        SYNC_TOKENS (--sync-tokens: combine every 300000 tokens of a rank, about a second of one
#        thread on an idle machine; by tokens so that the number of combinations per epoch, and
#        with it the cost and the staleness, does not depend on the machine's load)
#
# Weak scaling: one process on LINES documents against `mpirun -np 2` on those documents twice
# (the same work per rank; two copies rather than 2·LINES documents so that the vocabulary, and
# with it the cost of a token, is the same: on 40k against 80k documents the cost of a token of
# one process differs by up to 2x on this machine), interleaved REPS times; the rate is tokens
# per CPU-second of rank 0's process over its training (gyro prints it: getrusage, all threads,
# MPI's included, the corpus encoding excluded), so the 2 cores' other tenants do not move it
# much. Bar: 2 ranks within 15% of one process. Each 2-rank run also prints its combinations:
# how many, the wall time per combination (the table all-reduce, including the wait for a rank
# the scheduler has not run yet) and the bytes all-reduced.
#
# Quality: the corpus of char2vec_quality.sh with its settings (dim 100, window 5, 5 negatives,
# sample 1e-4, min-count 5, EPOCHS epochs): one process of 2 threads against 2 ranks of one
# thread with each combination rule (mean: Lorentz centroid; moved), Spearman's rho on
# wordsim-297 and COS960 (all). Bar: 2 ranks within 0.02 of one process on wordsim-297.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
GYRO=${GYRO:-$here/build/gyro}
SHARED=${SHARED:-$here/../shared}
WORK=${WORK:-/tmp/gyro-bench-mpi}
REPS=${REPS:-3}
LINES=${LINES:-40000}
WEAK_EPOCHS=${WEAK_EPOCHS:-3}
EPOCHS=${EPOCHS:-5}
QUALITY=${QUALITY:-1}
WEAK=${WEAK:-1}
SYNC_TOKENS=${SYNC_TOKENS:-300000}
[ -x "$GYRO" ] || { echo "build gyro first ($GYRO)"; exit 1; }
command -v mpirun > /dev/null || { echo "no mpirun (make deps installs openmpi-bin)"; exit 1; }
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir -p "$WORK"
cd "$WORK"
[ -s corpus.txt ] || /usr/bin/python3 "$here/tests/bench/char2vec_corpus.py" "$SHARED/corpora/text" > corpus.txt
head -n "$LINES" corpus.txt > weak1.txt
cat weak1.txt weak1.txt > weak2.txt
ARGS=(--dim 100 --window 5 --negatives 5 --sample 1e-4 --min-count 5 --checkpoint-every 0 --sync-tokens "$SYNC_TOKENS")
rate() { sed -n 's/^Training used .*: \([0-9]*\) tokens per CPU-second/\1/p' "$1"; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

if [ "$WEAK" = 1 ]; then
echo "weak scaling: $LINES documents per rank ($(wc -c < weak1.txt) bytes), $WEAK_EPOCHS epochs, dim 100, 1 thread per rank, --sync-tokens $SYNC_TOKENS"
: > r1 ; : > r2
for i in $(seq 1 "$REPS"); do
  "$GYRO" char2vec train "${ARGS[@]}" --epochs "$WEAK_EPOCHS" -o w1.hyp weak1.txt 2> w1.log
  rate w1.log >> r1
  mpirun --oversubscribe -np 2 "$GYRO" char2vec train "${ARGS[@]}" --epochs "$WEAK_EPOCHS" -o w2.hyp weak2.txt 2> w2.log
  rate w2.log >> r2
  echo "  run $i: 1 process $(tail -n 1 r1), 2 ranks $(tail -n 1 r2) tokens/CPU-s; $(grep '^Combined' w2.log)"
done
m1=$(median < r1) m2=$(median < r2)
awk -v a="$m1" -v b="$m2" 'BEGIN { printf "median tokens per CPU-second per rank: 1 process %.0f, 2 ranks %.0f (%.1f%%; bar: within 15%%)\n", a, b, 100 * (b - a) / a
  printf "TABLE | char2vec weak scaling, tokens/CPU-s per rank (2 ranks vs 1 process) | %.0f | %.0f | %.2f | >= 0.85 | %s |\n", b, a, b / a, (b / a >= 0.85) ? "yes" : "no" }'
fi

[ "$QUALITY" = 1 ] || exit 0
S=$SHARED/corpora/similarity
FILES=("$S/wordsim297/297.txt" "$S/cos960/COS960_all.txt")
echo
echo "quality: $(wc -l < corpus.txt) documents, $EPOCHS epochs, dim 100"
printf '| run | wordsim-297 rho | COS960 rho | wall s | combinations |\n|---|---|---|---|---|\n'
row() { # name table log
  local sims; sims=$("$GYRO" similarity -t "$2" "${FILES[@]}" | cut -f2 | paste -sd' ')
  printf '| %s | %s | %s | %s | %s |\n' "$1" "${sims%% *}" "${sims##* }" \
    "$(sed -n 's/^Wrote .*; \([0-9.]*\) s,.*/\1/p' "$3")" "$(sed -n 's/^Combined the 2 ranks. tables \([0-9]*\) times.*/\1/p' "$3")"
  echo "${sims%% *}" > "$2.rho"
}
"$GYRO" char2vec train "${ARGS[@]}" --epochs "$EPOCHS" --threads 2 -o q1.hyp corpus.txt 2> q1.log
row "1 process, 2 threads" q1.hyp q1.log
for c in mean moved; do
  mpirun --oversubscribe -np 2 "$GYRO" char2vec train "${ARGS[@]}" --epochs "$EPOCHS" --combine "$c" \
    -o "q2$c.hyp" corpus.txt 2> "q2$c.log"
  row "2 ranks x 1 thread, --combine $c" "q2$c.hyp" "q2$c.log"
done
r1=$(cat q1.hyp.rho)
for c in mean moved; do
  awk -v a="$r1" -v b="$(cat q2$c.hyp.rho)" -v c="$c" 'BEGIN { d = b - a; printf "TABLE | char2vec wordsim-297 rho, 2 ranks (--combine %s) vs 1 process | %.3f | %.3f | %+.3f | within 0.02 | %s |\n", c, b, a, d, (d >= -0.02) ? "yes" : "no" }'
done

#!/usr/bin/env bash
# mpi_train.sh — training over several processes with Open MPI (`mpirun --oversubscribe -np 2`):
#   char2vec: two ranks end with a table on the hyperboloid whose fit (the final loss) matches a
#     single process's at the same epochs; one rank killed with SIGKILL mid-run fails the job in
#     seconds (no hang) with the last checkpoint intact, which --resume with the same N finishes
#     and with another N refuses; ranks given different options refuse together.
#   classify: two ranks train the same model as one process (the same predictions, the
#     probabilities equal up to float summation order).
# Skipped when mpirun is missing or gyro was built without MPI. The embedding quality against a
# single process (Spearman rho on wordsim-297) is measured on a larger corpus by
# tests/bench/mpi_scaling.sh.
set -euo pipefail
: "${GYRO:?}" "${SHARED:?}"
T=$SHARED/corpora/text/fortunes-zh/tang300
[ -r "$T" ] || { echo "no $T"; exit 77; }
command -v mpirun > /dev/null || { echo "SKIP: no mpirun (make deps installs openmpi-bin)"; exit 77; }
cd "$TMPDIR"
fail() { echo "FAIL: $*"; exit 1; }
# Open MPI refuses to run as root unless told (a container's usual user)
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# quiet Open MPI's start-up on a machine without a high-speed network
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
MPI=(mpirun --oversubscribe -np 2)

# pid_of_rank R TAG: the pid of rank R of the gyro whose command line holds TAG
pid_of_rank() {
  local p
  for p in $(pgrep -f -- "$2"); do
    if tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then echo "$p"; return; fi
  done
}

# ---- char2vec: two ranks against one process -----------------------------------------------------
ARGS=(--dim 20 --epochs 10 --min-count 3 --checkpoint-every 0 --sync-every 0.2)
"${MPI[@]}" "$GYRO" char2vec train "${ARGS[@]}" -o r2.hyp "$T" 2> log2 || {
  grep -q "built without MPI" log2 && { echo "SKIP: gyro was built without MPI"; exit 77; }
  cat log2; fail "2 ranks"; }
"$GYRO" char2vec train "${ARGS[@]}" -o r1.hyp "$T" 2> log1 || { cat log1; fail "1 process"; }
grep -q "Training over 2 ranks" log2 || { cat log2; fail "no ranks line"; }
grep -q "Combined the 2 ranks' tables" log2 || { cat log2; fail "no combination summary"; }
[ "$(grep -c '^Wrote' log2)" = 1 ] || fail "not exactly one rank wrote the output"
err=$(sed -n 's/.*max |<x,x>_L + 1| = \([0-9.e+-]*\).*/\1/p' log2)
awk -v e="$err" 'BEGIN{exit !(e < 1e-5)}' || fail "rows off the manifold: $err"
[ ! -e r2.hyp.ckpt ] && [ ! -e r2.hyp.ckpt.ids ] || fail "checkpoint left behind"
"$GYRO" dump r2.hyp | grep -q '"model"' || fail "output unreadable"
loss() { sed -n 's/.*Progress: 100.0%.*loss: \([0-9.]*\).*/\1/p' "$1" | tail -n 1; }
l1=$(loss log1) l2=$(loss log2)
echo "final loss: 1 process $l1, 2 ranks $l2"
awk -v a="$l1" -v b="$l2" 'BEGIN{exit !(b > 0 && b < 1.1 * a)}' || fail "2 ranks fit worse: loss $l2 vs $l1"
# the table reads as well as the single process's (the similarity command works on it)
"$GYRO" similarity -t r2.hyp "$SHARED/corpora/similarity/wordsim297/297.txt" > sim2
[ "$(cut -f3 sim2)" -gt 0 ] || fail "no pair covered"

# ---- mismatched options between ranks ------------------------------------------------------------
if mpirun --oversubscribe -np 1 "$GYRO" char2vec train -q --dim 20 -o mm.hyp "$T" : \
    -np 1 "$GYRO" char2vec train -q --dim 21 -o mm.hyp "$T" 2> logm; then fail "mismatched ranks accepted"; fi
[ "$(grep -c 'ranks disagree on the command line' logm)" = 2 ] || { cat logm; fail "mismatch message"; }
[ ! -e mm.hyp ] && [ ! -e mm.hyp.ckpt ] || fail "files written by mismatched ranks"

# ---- a rank killed mid-run -----------------------------------------------------------------------
KARGS=(--dim 20 --epochs 60 --min-count 3 --checkpoint-every 0.3 --sync-every 0.1)
"${MPI[@]}" "$GYRO" char2vec train -q "${KARGS[@]}" -o kill.hyp "$T" 2> logk &
mp=$!
for _ in $(seq 1 600); do [ -e kill.hyp.ckpt ] && break; sleep 0.05; done
touch marker
for _ in $(seq 1 600); do [ kill.hyp.ckpt -nt marker ] && break; sleep 0.05; done
victim=$(pid_of_rank 1 "kill.hyp")
[ -n "$victim" ] || fail "rank 1 not found (training ended before the kill?)"
kill -9 "$victim"
t0=$(date +%s)
for _ in $(seq 1 300); do kill -0 $mp 2> /dev/null || break; sleep 0.1; done
if kill -0 $mp 2> /dev/null; then kill -9 $mp; fail "the job hangs 30 s after a rank was killed"; fi
if wait $mp; then fail "the job succeeded although a rank was killed"; fi
echo "job ended $(( $(date +%s) - t0 )) s after rank 1 was killed"
[ -z "$(pid_of_rank 0 kill.hyp)" ] || fail "rank 0 still running"
[ -e kill.hyp.ckpt ] && [ -e kill.hyp.ckpt.ids ] || fail "no checkpoint after the kill"
[ ! -e kill.hyp ] || fail "output written although training did not finish"
ls | grep -q '\.tmp\.' && fail "temporary file left behind"
# the checkpoint is whole: one process refuses it (it belongs to 2 ranks), 2 ranks finish it
if "$GYRO" char2vec train --resume -q -o kill.hyp 2> logr1; then fail "resume with 1 process accepted"; fi
grep -q "split over 2 ranks" logr1 || { cat logr1; fail "wrong-N message"; }
"${MPI[@]}" "$GYRO" char2vec train --resume -o kill.hyp 2> logr2 || { cat logr2; fail "resume with 2 ranks"; }
grep -q "^Resuming kill.hyp.ckpt" logr2 || { cat logr2; fail "no resume line"; }
[ -s kill.hyp ] || fail "no output after resume"
err=$(sed -n 's/.*max |<x,x>_L + 1| = \([0-9.e+-]*\).*/\1/p' logr2)
awk -v e="$err" 'BEGIN{exit !(e < 1e-5)}' || fail "resumed rows off the manifold: $err"
echo "ok"

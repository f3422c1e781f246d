#!/usr/bin/env bash
# char2vec_resume.sh — kill -9 during training, then --resume to the end; Ctrl-C (SIGINT) writes
# a checkpoint and exits 130, --resume finishes; options that contradict the checkpoint are
# refused.
set -euo pipefail
: "${GYRO:?}" "${SHARED:?}"
T=$SHARED/corpora/text/fortunes-zh/tang300
[ -r "$T" ] || { echo "no $T"; exit 77; }
cd "$TMPDIR"
fail() { echo "FAIL: $*"; exit 1; }
# enough work that an idle machine is still training when the signal comes: 120 epochs of ~90k
# characters at dim 50 (~3 s of CPU, several times the 1-second checkpoint interval, so a
# checkpoint newer than the first one exists for seconds before the run ends); each kill happens
# as soon as its precondition holds, not after a fixed delay, so the test does not depend on the
# machine's speed.
EPOCHS=120
ARGS=(--dim 50 --epochs $EPOCHS --min-count 2 --sample 0 --checkpoint-every 1)

# --- kill -9 -------------------------------------------------------------------------------
"$GYRO" char2vec train "${ARGS[@]}" -o k.hyp "$T" 2> log1 &
pid=$!
# the first checkpoint is written before any training; wait for a later one (newer than a
# marker made after the first appeared), so the kill lands mid-run with progress saved
for _ in $(seq 1 600); do [ -e k.hyp.ckpt ] && break; sleep 0.05; done
touch marker
for _ in $(seq 1 600); do [ k.hyp.ckpt -nt marker ] && break; sleep 0.05; done
kill -9 $pid 2> /dev/null || fail "training ended before kill -9 (no checkpoint seen in time)"
wait $pid 2> /dev/null || true
[ -e k.hyp.ckpt ] && [ -e k.hyp.ckpt.ids ] || fail "no checkpoint after kill -9"
[ ! -e k.hyp ] || fail "output written although training did not finish"
# contradicting options are refused, the checkpoint is untouched
cp k.hyp.ckpt k.ckpt.orig
if "$GYRO" char2vec train --resume --dim 7 -o k.hyp 2> err; then fail "dim mismatch accepted"; else rc=$?; fi
[ $rc = 2 ] || fail "dim mismatch exit $rc"
grep -q -- "--dim 7 (the checkpoint has 50)" err || { cat err; fail "dim mismatch message"; }
# options that cannot change mid-run are refused naming both values (they used to be ignored)
if "$GYRO" char2vec train --resume --seed 9 --theta 2 --epochs $EPOCHS -o k.hyp 2> err; then fail "--seed/--theta accepted"; else rc=$?; fi
[ $rc = 2 ] || fail "--seed/--theta exit $rc"
grep -q -- "--theta 2 (the checkpoint has 3)" err && grep -q -- "--seed 9 (the checkpoint has 1)" err \
  || { cat err; fail "--seed/--theta message"; }
cmp -s k.hyp.ckpt k.ckpt.orig || fail "a refused resume changed the checkpoint"
# --lr, --max-step and --sample are honoured: the run continues with them and the table says so
"$GYRO" char2vec train --resume --lr 0.02 --max-step 0.5 --epochs $EPOCHS -o k.hyp 2> log2 || { cat log2; fail "resume after kill -9"; }
grep -q -- "continuing with --lr 0.02 --max-step 0.5" log2 || { cat log2; fail "no message for the new --lr"; }
"$GYRO" dump k.hyp | head -n 3 | grep -q -- "--lr 0.02 --theta 3 --max-step 0.5" || fail "the new --lr was not used"
grep -q "Resuming" log2 || fail "no resume message"
start=$(sed -n 's/^Resuming .* at \([0-9.]*\)%.*/\1/p' log2)
awk -v s="$start" 'BEGIN{exit !(s > 0 && s < 100)}' || fail "resumed at $start%"
[ -s k.hyp ] && [ ! -e k.hyp.ckpt ] || fail "resume output"
"$GYRO" neighbors -t k.hyp -k 3 山 > /dev/null

# --- Ctrl-C -----------------------------------------------------------------------------------
"$GYRO" char2vec train "${ARGS[@]}" --checkpoint-every 0 -o c.hyp "$T" 2> log3 &
pid=$!
for _ in $(seq 1 600); do grep -q "Progress:" log3 2> /dev/null && break; sleep 0.05; done
kill -INT $pid 2> /dev/null || fail "training ended before SIGINT"
if wait $pid; then rc=0; else rc=$?; fi
[ $rc = 130 ] || { cat log3; fail "SIGINT exit status $rc"; }
grep -q "checkpoint written" log3 || fail "no checkpoint message"
[ ! -e c.hyp ] && [ -e c.hyp.ckpt ] || fail "SIGINT files"
"$GYRO" char2vec train -q --resume -o c.hyp
[ -s c.hyp ] || fail "no output after resuming"
echo ok

#!/usr/bin/env bash
# rl_interrupt.sh — SIGINT or SIGTERM during the supervised start of `rl finetune --env composite`
# and during `rl transition` stops after the current step, saves what was trained so far to
# --out (and --sft-out) and exits 130; they used to kill the process with nothing saved. Each
# signal is sent once progress has been observed, not after a fixed delay: in a file the run
# itself created (out.txt and err.txt are removed first; the redirection happens in the
# background child, so a wait on the previous run's err.txt could succeed at once and the signal
# reach the process before its handler: a SIGTERM killed it, and a SIGINT, which a background
# job of a non-interactive shell starts with ignored, was lost and the run went on until the
# timeout, 4 runs in 30 under load). A run still going at the timeout is reported as such.
set -uo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
cd "$TMPDIR"
fail() { echo "FAIL: $*"; exit 1; }
wait_for() {   # wait_for FILE PATTERN: until PATTERN appears in FILE (at most ~60 s)
  for _ in $(seq 1 1200); do grep -q "$2" "$1" 2> /dev/null && return 0; sleep 0.05; done
  return 1
}

"$GYRO" generate music -n 300 -s 2 -q -o m.examples || fail "generate"
"$GYRO" split -s 1 -d 0.2 -q -t train.examples -v dev.examples m.examples || fail "split"

# --- the supervised start of rl finetune --env composite: SIGINT, then SIGTERM ----------------
for sig in INT TERM; do
  rm -f rl.model sft.model out.txt err.txt
  # no --dev: early stopping on a dev set could end the supervised start before the signal
  timeout 120 "$GYRO" rl finetune --env composite --train train.examples --dim 16 --layers 1 \
    --heads 2 --sft-epochs 100000 --iterations 3 --states 4 --group 4 \
    --sft-out sft.model --out rl.model > out.txt 2> err.txt &
  pid=$!
  wait_for err.txt "Progress:" || { kill -9 $pid; cat err.txt; fail "$sig: no progress seen"; }
  kill -$sig $pid
  wait $pid; rc=$?
  [ $rc = 124 ] && fail "$sig during the supervised start: did not stop (still running at the timeout)"
  [ $rc = 130 ] || { cat err.txt; fail "$sig during the supervised start: exit $rc, want 130"; }
  grep -q "interrupted" err.txt || { cat err.txt; fail "$sig: no message"; }
  [ -s rl.model ] && [ -s sft.model ] || fail "$sig: the supervised policy was not saved"
  "$GYRO" reason --env composite --model rl.model "播放周杰伦的晴天" > r.txt \
    || fail "$sig: the saved policy does not load"
  grep -q '^utterance: ' r.txt || fail "$sig: reason output: $(cat r.txt)"
  ls | grep -q '\.tmp\.' && fail "$sig: temporary file left behind"
done

# --- rl transition ------------------------------------------------------------------------------
for sig in INT TERM; do
  rm -f t.model out.txt err.txt
  timeout 120 "$GYRO" rl transition --env vdp --episodes 40 --test-episodes 5 --epochs 100000 --out t.model \
    > out.txt 2> err.txt &
  pid=$!
  wait_for err.txt "Progress:" || { kill -9 $pid; cat err.txt; fail "transition $sig: no progress seen"; }
  kill -$sig $pid
  wait $pid; rc=$?
  [ $rc = 124 ] && fail "transition $sig: did not stop (still running at the timeout)"
  [ $rc = 130 ] || { cat err.txt; fail "transition $sig: exit $rc, want 130"; }
  grep -q "interrupted in epoch" err.txt || { cat err.txt; fail "transition $sig: no message"; }
  grep -q "test_mse=" out.txt || fail "transition $sig: no summary line"
  [ -s t.model ] || fail "transition $sig: the model was not saved"
  "$GYRO" rl finetune --env vdp --transition t.model --iterations 1 -q > /dev/null \
    || fail "transition $sig: the saved model does not load"
done
echo ok

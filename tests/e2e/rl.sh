#!/usr/bin/env bash
# rl.sh — end-to-end: gyro rl finetune on the three environments (three geometries), atomic
# checkpoints, reproducibility for a seed, gyro rl eval, gyro reason, and the error exits.
set -euo pipefail
: "${GYRO:?}"
T=${TMPDIR:-/tmp}
small=(--iterations 3 --states 4 --group 4 --epochs 2 --eval 4 --eval-every 1 -q)

fail() { echo "FAIL: $*"; exit 1; }
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# 1. every environment trains end to end in both geometries and writes a loadable model
for env in root vdp unicycle; do
  for geo in hyperbolic euclidean lorentz; do
    out=$("$GYRO" rl finetune --env $env --geometry $geo "${small[@]}" --seed 3 --out "$T/$env-$geo.bin")
    [ "$(field "$out" env)" = $env ] || fail "summary env: $out"
    [ "$(field "$out" geometry)" = $geo ] || fail "summary geometry: $out"
    [ "$(field "$out" steps)" = 6 ] || fail "3 iterations x 2 epochs should be 6 steps: $out"
    fm=$(field "$out" final_metric)
    awk -v m="$fm" 'BEGIN{exit !(m == m+0 && m >= 0)}' || fail "final_metric not a number: $out"
    [ -s "$T/$env-$geo.bin" ] || fail "no model file for $env/$geo"
    ls "$T" | grep -q '\.tmp\.' && fail "temporary file left behind"
    ev=$("$GYRO" rl eval --model "$T/$env-$geo.bin" --eval 4)
    [ "$(field "$ev" env)" = $env ] || fail "eval: $ev"
    [ "$(field "$ev" geometry)" = $geo ] || fail "eval geometry: $ev"
  done
done

# 1b. the Lorentz policy continues from its file, and reason reads it; a policy file of a
# geometry this gyro does not know (the header's geometry field set to 3, checksum redone) is
# refused with exit 65 and the value named
"$GYRO" rl finetune --init "$T/root-lorentz.bin" "${small[@]}" | grep -q 'env=root geometry=lorentz' \
  || fail "--init of a Lorentz policy"
"$GYRO" reason --model "$T/root-lorentz.bin" --start 3.5 | grep -q '^result:  MAE = ' || fail "reason lorentz"
python3 - "$T/root-lorentz.bin" "$T/geo3.bin" <<'PY'
import struct, sys, zlib
b = bytearray(open(sys.argv[1], "rb").read())
struct.pack_into("<i", b, 16, 3)                   # magic 8, version 4, header bytes 4: geometry
struct.pack_into("<I", b, len(b) - 4, zlib.crc32(bytes(b[:-4])))
open(sys.argv[2], "wb").write(b)
PY
set +e
"$GYRO" rl eval --model "$T/geo3.bin" --eval 2 >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc = 65 ] || fail "a policy of an unknown geometry should exit 65, got $rc"
grep -q 'unknown policy geometry 3' "$T/err" || fail "unknown geometry message: $(cat "$T/err")"
set +e
"$GYRO" rl finetune --env root --geometry lorentz --experts 2 "${small[@]}" >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc = 2 ] || fail "--experts with --geometry lorentz should exit 2, got $rc"
grep -q 'Lorentz policy has none' "$T/err" || fail "MoE option message: $(cat "$T/err")"

# 2. reproducible: the same seed gives the same figures
a=$("$GYRO" rl finetune --env root "${small[@]}" --seed 7 | sed 's/ seconds=.*expert_load/ expert_load/')
b=$("$GYRO" rl finetune --env root "${small[@]}" --seed 7 | sed 's/ seconds=.*expert_load/ expert_load/')
[ "$a" = "$b" ] || fail "not reproducible: '$a' vs '$b'"
c=$("$GYRO" rl finetune --env root "${small[@]}" --seed 8 | sed 's/ seconds=.*expert_load/ expert_load/')
[ "$a" != "$c" ] || fail "another seed gave identical figures"

# 3. continue from a saved policy (--init) with it as the KL reference (--ref)
"$GYRO" rl finetune --init "$T/root-hyperbolic.bin" --ref "$T/root-hyperbolic.bin" "${small[@]}" \
  --out "$T/root-2.bin" | grep -q 'env=root geometry=hyperbolic' || fail "--init"

# 3b. --log reports the expert load during training
"$GYRO" rl finetune --env root "${small[@]}" --log 2>"$T/log.txt" >/dev/null
[ "$(grep -c '^iteration .* expert load' "$T/log.txt")" = 3 ] || fail "--log: $(cat "$T/log.txt")"

# 4. gyro reason prints the steps and the result
r=$("$GYRO" reason --model "$T/root-hyperbolic.bin" --start 3.5)
grep -q '^step  1: x = 3.500000000000' <<<"$r" || fail "reason start: $r"
[ "$(grep -c '^step' <<<"$r")" = 6 ] || fail "reason should print 6 steps: $r"
grep -q '^result:  MAE = ' <<<"$r" || fail "reason result: $r"
"$GYRO" reason --model "$T/vdp-euclidean.bin" | grep -q '^result:  J = ' || fail "reason vdp"
"$GYRO" reason --model "$T/unicycle-hyperbolic.bin" --start=-1,2,0.5 --sample --seed 2 \
  | grep -q 'x = -1.0000  y = +2.0000' || fail "reason unicycle start"

# 5. a learned transition model reports its held-out error
t=$("$GYRO" rl transition --env vdp --episodes 10 --test-episodes 4 --epochs 2 -q)
[ "$(field "$t" test_rows)" = 96 ] || fail "transition test rows: $t"
"$GYRO" rl transition --env nope -q >/dev/null 2>&1 && fail "transition unknown env"

# 5a. a saved transition model drives the GRPO rollouts (--transition); evaluation stays true
"$GYRO" rl transition --env vdp --episodes 10 --test-episodes 2 --epochs 2 -q --out "$T/tvdp.bin" >/dev/null
[ -s "$T/tvdp.bin" ] || fail "transition --out wrote nothing"
ls "$T" | grep -q '\.tmp\.' && fail "temporary file left behind by transition --out"
m=$("$GYRO" rl finetune --env vdp "${small[@]}" --seed 3 --transition "$T/tvdp.bin")
[ "$(field "$m" env)" = vdp ] || fail "finetune --transition: $m"
[ "$(field "$m" steps)" = 6 ] || fail "finetune --transition steps: $m"
m2=$("$GYRO" rl finetune --env vdp "${small[@]}" --seed 3 --transition "$T/tvdp.bin")
[ "$(sed 's/ seconds=.*expert_load/ expert_load/' <<<"$m")" = "$(sed 's/ seconds=.*expert_load/ expert_load/' <<<"$m2")" ] \
  || fail "--transition not reproducible"
t0=$("$GYRO" rl finetune --env vdp "${small[@]}" --seed 3)
[ "$(field "$m" batch_reward)" != "$(field "$t0" batch_reward)" ] || fail "--transition changed nothing: $m"
set +e
"$GYRO" rl finetune --env unicycle "${small[@]}" --transition "$T/tvdp.bin" >/dev/null 2>"$T/err"; rc=$?
[ $rc = 65 ] || fail "a vdp model for unicycle should exit 65, got $rc"
grep -q 'not a transition model' "$T/err" || fail "mismatch message: $(cat "$T/err")"
"$GYRO" rl finetune --env vdp "${small[@]}" --transition "$T/vdp-hyperbolic.bin" >/dev/null 2>&1; [ $? = 65 ] || fail "a policy as --transition should exit 65"
"$GYRO" rl finetune --env root "${small[@]}" --transition "$T/tvdp.bin" >/dev/null 2>&1; [ $? = 2 ] || fail "--transition on root should exit 2"
"$GYRO" rl finetune --env vdp "${small[@]}" --transition "$T/none.bin" >/dev/null 2>&1; [ $? = 1 ] || fail "missing --transition file should exit 1"
set -e

# 5b. SIGINT stops after the current iteration, saves the policy and exits 130
"$GYRO" rl finetune --env vdp --iterations 100000 --states 2 --group 2 -q --out "$T/int.bin" 2>"$T/int.err" &
pid=$!
for _ in $(seq 1 100); do [ -s "$T/int.err" ] || [ -e "$T/int.bin" ] && break; sleep 0.1; done
sleep 1
kill -INT $pid
set +e; wait $pid; rc=$?; set -e
[ $rc = 130 ] || fail "SIGINT should exit 130, got $rc: $(cat "$T/int.err")"
grep -q 'interrupted after' "$T/int.err" || fail "SIGINT message: $(cat "$T/int.err")"
"$GYRO" rl eval --model "$T/int.bin" --eval 2 | grep -q 'env=vdp' || fail "policy saved on SIGINT"

# 6. errors: usage 2, bad model 65, missing file 1
set +e
"$GYRO" rl finetune --env nope -q >/dev/null 2>&1; [ $? = 2 ] || fail "unknown env should exit 2"
"$GYRO" rl finetune --env root --group 1 -q >/dev/null 2>&1; [ $? = 2 ] || fail "group 1 should exit 2"
"$GYRO" rl finetune --env root --bogus >/dev/null 2>&1; [ $? = 2 ] || fail "unknown option should exit 2"
"$GYRO" rl finetune -q >/dev/null 2>&1; [ $? = 2 ] || fail "missing --env should exit 2"
"$GYRO" rl frobnicate >/dev/null 2>&1; [ $? = 2 ] || fail "unknown subcommand should exit 2"
"$GYRO" reason --model "$T/root-hyperbolic.bin" --start 99 >/dev/null 2>&1; [ $? = 2 ] || fail "bad start should exit 2"
"$GYRO" reason --model "$T/root-hyperbolic.bin" --start 1,2 >/dev/null 2>&1; [ $? = 2 ] || fail "two starts for root should exit 2"
head -c 100 "$T/root-hyperbolic.bin" > "$T/trunc.bin"
"$GYRO" reason --model "$T/trunc.bin" >/dev/null 2>"$T/err"; [ $? = 65 ] || fail "truncated model should exit 65"
grep -q 'truncated' "$T/err" || fail "truncated message: $(cat "$T/err")"
echo "not a model" > "$T/junk.bin"
"$GYRO" rl eval --model "$T/junk.bin" >/dev/null 2>&1; [ $? = 65 ] || fail "junk model should exit 65"
"$GYRO" reason --model "$T/none.bin" >/dev/null 2>&1; [ $? = 1 ] || fail "missing model should exit 1"
"$GYRO" rl finetune --env root "${small[@]}" --out /nonexistent/dir/m.bin >/dev/null 2>&1; [ $? = 1 ] || fail "unwritable output should exit 1"
set -e
"$GYRO" rl --help | grep 'finetune' > /dev/null || fail "rl --help"
"$GYRO" reason --help | grep 'usage: gyro reason' > /dev/null || fail "reason --help"
echo "rl e2e OK"

#!/usr/bin/env bash
# rl_composite.sh — end-to-end: gyro rl finetune --env composite on a small generated music set
# (supervised start, GRPO, figures before and after), reproducibility for a seed, --init from the
# saved supervised start, gyro reason --env composite, gyro rl eval --env composite (greedy and
# beam search) and the error exits.
set -euo pipefail
: "${GYRO:?}"
T=${TMPDIR:-/tmp}
fail() { echo "FAIL: $*"; exit 1; }
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
num01() { awk -v m="$1" 'BEGIN{exit !(m == m+0 && m >= 0 && m <= 1)}'; }

"$GYRO" generate music -n 300 -s 2 -q -o "$T/m.examples"
"$GYRO" split -s 1 -d 0.2 -q -t "$T/train.examples" -v "$T/dev.examples" "$T/m.examples"
small=(--dim 16 --layers 1 --heads 2 --sft-epochs 2 --iterations 3 --states 4 --group 4 -q)

# 1. supervised start + GRPO, both models written, figures in [0, 1]
out=$("$GYRO" rl finetune --env composite --train "$T/train.examples" --dev "$T/dev.examples" \
      "${small[@]}" --seed 3 --sft-out "$T/sft.model" --out "$T/rl.model")
[ "$(field "$out" env)" = composite ] || fail "summary: $out"
[ "$(field "$out" iterations)" = 3 ] || fail "iterations: $out"
for k in dev_exact_before dev_f1_before dev_exact_after dev_f1_after reward_first reward_last; do
  num01 "$(field "$out" $k)" || fail "$k not in [0, 1]: $out"
done
[ -s "$T/sft.model" ] && [ -s "$T/rl.model" ] || fail "model files missing"
ls "$T" | grep -q '\.tmp' && fail "temporary file left behind"

# 2. reproducible for a seed (timings aside)
strip() { sed 's/ sft_seconds=[^ ]*//; s/ grpo_seconds=[^ ]*//'; }
a=$("$GYRO" rl finetune --env composite --train "$T/train.examples" --dev "$T/dev.examples" "${small[@]}" --seed 3 | strip)
[ "$a" = "$(strip <<<"$out")" ] || fail "not reproducible: $a vs $out"

# 3. --init skips the supervised stage; its 'before' figures are the saved start's
b=$("$GYRO" rl finetune --env composite --train "$T/train.examples" --dev "$T/dev.examples" \
    --init "$T/sft.model" --iterations 2 --states 4 --group 4 -q --seed 3)
[ "$(field "$b" dev_exact_before)" = "$(field "$out" dev_exact_before)" ] || fail "--init start differs: $b"
[ "$(field "$b" sft_epochs)" = 0 ] || fail "--init trained again: $b"

# 4. reason prints the steps, ending with STOP, and the emitted intents
r=$("$GYRO" reason --env composite --model "$T/rl.model" "播放周杰伦的晴天" "这首歌叫什么")
[ "$(grep -c '^utterance: ' <<<"$r")" = 2 ] || fail "reason: $r"
[ "$(grep -c '^step 1: ' <<<"$r")" = 2 ] || fail "reason steps: $r"
[ "$(grep -c '<stop>' <<<"$r")" = 2 ] || fail "reason STOP: $r"
[ "$(grep -c '^intents: [a-z_]' <<<"$r")" = 2 ] || fail "reason intents: $r"
"$GYRO" reason --env composite --help | grep 'composite' > /dev/null || fail "reason --help"
"$GYRO" rl finetune --env composite --help | grep -- '--train' > /dev/null || fail "finetune --help"

# 5. rl eval --env composite: greedy figures equal finetune's; beam search; atom P/R/F1
e=$("$GYRO" rl eval --env composite -m "$T/rl.model" "$T/dev.examples")
[ "$(field "$e" exact)" = "$(field "$out" dev_exact_after)" ] || fail "rl eval exact differs: $e vs $out"
[ "$(field "$e" mean_f1)" = "$(field "$out" dev_f1_after)" ] || fail "rl eval F1 differs: $e vs $out"
for k in exact mean_f1 atom_p atom_r atom_f1; do num01 "$(field "$e" $k)" || fail "rl eval $k: $e"; done
[ "$(field "$e" n)" = "$("$GYRO" dump "$T/dev.examples" | grep -c '"label"')" ] || fail "rl eval n: $e"
eb=$("$GYRO" rl eval --env composite -m "$T/rl.model" --beam 4 "$T/dev.examples" "$T/train.examples")
[ "$(grep -c '^file=' <<<"$eb")" = 2 ] || fail "rl eval two files: $eb"
[ "$(head -1 <<<"$eb" | tr ' ' '\n' | sed -n 's/^beam=//p')" = 4 ] || fail "rl eval beam: $eb"
"$GYRO" rl eval --env composite --help | grep -- '--beam' > /dev/null || fail "rl eval --help"

# 6. --from: a start from a flat classifier over the label sets
"$GYRO" classify train -q --dim 16 --layers 1 --heads 2 --epochs 2 -o "$T/flat.clf" "$T/train.examples"
f=$("$GYRO" rl finetune --env composite --train "$T/train.examples" --dev "$T/dev.examples" --from "$T/flat.clf" \
    --sft-epochs 2 --iterations 2 --states 4 --group 4 -q --out "$T/from.model")
[ "$(field "$f" sft_epochs)" = 2 ] || fail "--from epochs: $f"
num01 "$(field "$f" dev_exact_after)" || fail "--from figures: $f"
"$GYRO" rl eval --env composite -m "$T/from.model" "$T/dev.examples" | grep -q '^file=' || fail "--from model eval"

# 7. errors: usage 2, bad data / model 65, missing file 1
set +e
"$GYRO" rl finetune --env composite --dev "$T/dev.examples" -q >/dev/null 2>&1; [ $? = 2 ] || fail "missing --train"
"$GYRO" rl finetune --env composite --train "$T/train.examples" --group 1 -q >/dev/null 2>&1; [ $? = 2 ] || fail "--group 1"
"$GYRO" rl finetune --env composite --train "$T/train.examples" --bogus >/dev/null 2>&1; [ $? = 2 ] || fail "unknown option"
"$GYRO" rl finetune --env composite --train "$T/nope.examples" -q >/dev/null 2>&1; [ $? = 1 ] || fail "missing train file"
"$GYRO" reason --env composite --model "$T/rl.model" >/dev/null 2>&1; [ $? = 2 ] || fail "no utterance"
"$GYRO" reason --env composite --model "$T/m.examples" "x" >/dev/null 2>&1; [ $? = 65 ] || fail "not a model"
"$GYRO" rl eval --env composite -m "$T/rl.model" >/dev/null 2>&1; [ $? = 2 ] || fail "rl eval without a file"
"$GYRO" rl eval --env composite -m "$T/rl.model" --beam 0 "$T/dev.examples" >/dev/null 2>&1; [ $? = 2 ] || fail "--beam 0"
"$GYRO" rl eval --env composite "$T/dev.examples" >/dev/null 2>&1; [ $? = 2 ] || fail "rl eval without --model"
"$GYRO" rl eval --env composite -m "$T/m.examples" "$T/dev.examples" >/dev/null 2>&1; [ $? = 65 ] || fail "rl eval: not a model"
"$GYRO" rl eval --env composite -m "$T/rl.model" "$T/rl.model" >/dev/null 2>&1; [ $? = 65 ] || fail "rl eval: not Examples"
"$GYRO" rl finetune --env composite --train "$T/train.examples" --dropout 1 -q >/dev/null 2>&1; [ $? = 2 ] || fail "--dropout 1"
"$GYRO" rl finetune --env composite --train "$T/train.examples" --from "$T/flat.clf" --init "$T/sft.model" -q >/dev/null 2>&1; [ $? = 2 ] || fail "--from with --init"
"$GYRO" classify train -q --epochs 2 -o "$T/ngrams.clf" "$T/train.examples"   # the n-gram default: no transformer
"$GYRO" rl finetune --env composite --train "$T/train.examples" --from "$T/ngrams.clf" -q >/dev/null 2>"$T/ng.err"; [ $? = 2 ] \
  && grep -q "n-gram model" "$T/ng.err" || fail "--from an n-gram classifier"
"$GYRO" rl finetune --env composite --train "$T/train.examples" --from "$T/m.examples" -q >/dev/null 2>&1; [ $? = 65 ] || fail "--from: not a classifier"
"$GYRO" rl finetune --env root --iterations 1 --states 2 --group 2 --eval 2 -q >/dev/null 2>&1; [ $? = 0 ] || fail "other envs unaffected"
set -e
echo "ok"

#!/usr/bin/env bash
# rl_composite.sh — composite intents, step by step: greedy exact-set accuracy and mean F1 on a
# held-out split before and after GRPO, on CrossWOZ (real composite labels) and on the generated
# music set. Each data set is split by dialogue / session with a fixed seed (20% dev); the
# supervised start is trained once per data set and seed, then GRPO fine-tunes it; the summary
# lines of `gyro rl finetune --env composite` go to $OUT/runs.txt and a Markdown table to stdout.
# --dev also stops the supervised start early, so both figures are measured on the split that
# chose the start's epoch: this bench shows what GRPO adds to a start, not held-out quality
# (tests/bench/composite_vs_flat.sh compares against the flat classifier on untouched turns).
#
#   tests/bench/rl_composite.sh [GYRO]        (default build/gyro; run from the project root)
#
# Knobs (defaults in brackets): SEEDS ["1"], SETS ["crosswoz music"], MUSIC_N [4000] generated
# examples, SFT_EPOCHS [10], ITER [100] GRPO iterations of STATES [16] utterances x GROUP [8]
# episodes, LR [1e-4], OUT [a temporary directory].
set -euo pipefail
GYRO=${1:-${GYRO:-build/gyro}}
SEEDS=${SEEDS:-1}
SETS=${SETS:-"crosswoz music"}
MUSIC_N=${MUSIC_N:-4000}
SFT_EPOCHS=${SFT_EPOCHS:-10}
ITER=${ITER:-100}
STATES=${STATES:-16}
GROUP=${GROUP:-8}
LR=${LR:-1e-4}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
CW=../shared/corpora/intent/crosswoz/val.json.zip
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

echo "| set | seed | train / dev | dev exact before | after | dev F1 before | after | sampled reward first -> last | SFT s | GRPO s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for set in $SETS; do
  case $set in
    crosswoz) [ -f "$CW" ] || { echo "skip crosswoz: $CW missing" >&2; continue; }
              "$GYRO" import --format crosswoz "$CW" -o "$OUT/$set.examples" 2>/dev/null ;;
    music) "$GYRO" generate music -n "$MUSIC_N" -q -o "$OUT/$set.examples" ;;
    *) echo "unknown set $set" >&2; exit 2 ;;
  esac
  "$GYRO" split -s 1 -d 0.2 -q -t "$OUT/$set.train" -v "$OUT/$set.dev" "$OUT/$set.examples"
  for seed in $SEEDS; do
    line=$("$GYRO" rl finetune --env composite --train "$OUT/$set.train" --dev "$OUT/$set.dev" \
           --sft-epochs "$SFT_EPOCHS" --iterations "$ITER" --states "$STATES" --group "$GROUP" \
           --lr "$LR" --seed "$seed" -q --sft-out "$OUT/$set-$seed.sft" --out "$OUT/$set-$seed.policy")
    echo "set=$set seed=$seed $line" >> "$OUT/runs.txt"
    printf '| %s | %s | %s / %s | %s | %s | %s | %s | %s -> %s | %s | %s |\n' "$set" "$seed" \
      "$(field "$line" n_train)" "$(field "$line" n_dev)" "$(field "$line" dev_exact_before)" \
      "$(field "$line" dev_exact_after)" "$(field "$line" dev_f1_before)" "$(field "$line" dev_f1_after)" \
      "$(field "$line" reward_first)" "$(field "$line" reward_last)" "$(field "$line" sft_seconds)" \
      "$(field "$line" grpo_seconds)"
  done
done

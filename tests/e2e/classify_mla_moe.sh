#!/usr/bin/env bash
# classify_mla_moe.sh — `gyro classify train` with MLA attention and MoE feed-forward blocks
# (--attention mla --ffn moe), hyperbolic and Euclidean: trained models learn a small generated
# set, save and load (eval, predict), training is reproducible from the seed; bad block options
# are usage errors; the per-epoch line shows the expert load of MoE models only.
set -euo pipefail
: "${GYRO:?}" "${TMPDIR:?}"
# shellcheck source=tests/e2e/lib/intents.sh
. "$(dirname "$0")/lib/intents.sh"
cd "$TMPDIR"

intents_data

opts=(--dim 16 --layers 1 --heads 2 --epochs 15 --batch 16 --optimizer adam --lr 0.01
      --dev-fraction 0.2 --seed 5 --quiet)
blocks=(--attention mla --mla-latent 8 --ffn moe --experts 4 --top-k 1)
for geo in hyperbolic euclidean; do
  "$GYRO" classify train --geometry "$geo" "${opts[@]}" "${blocks[@]}" -o "$geo.clf" data.pb
  "$GYRO" classify eval -m "$geo.clf" data.pb > "$geo.txt"
  acc=$(awk '/^accuracy:/ {gsub("%","",$2); print $2}' "$geo.txt")
  awk -v a="$acc" 'BEGIN { exit !(a >= 85) }' || { echo "$geo MLA+MoE accuracy $acc% too low"; cat "$geo.txt"; exit 1; }
  printf '播放晴天\n导航到机场\n' | "$GYRO" classify predict -m "$geo.clf" > "$geo.jsonl"
  sed -n 1p "$geo.jsonl" | grep -q '"intents":\[{"label":"music.play"'
  sed -n 2p "$geo.jsonl" | grep -q '"intents":\[{"label":"navigation.navigation"'
done
# same seed, same bytes; MLA with a query latent and RoPE, MoE with a shared expert and top-2
"$GYRO" classify train --geometry hyperbolic "${opts[@]}" "${blocks[@]}" -o again.clf data.pb
cmp hyperbolic.clf again.clf
"$GYRO" classify train "${opts[@]}" --attention mla --mla-latent 6 --mla-q-latent 10 --mla-rope 4 \
  --ffn moe --experts 3 --shared-experts 1 --top-k 2 --balance 0.05 -o opts.clf data.pb
"$GYRO" classify eval -m opts.clf data.pb | grep -q '^accuracy:'

# the per-epoch line reports the expert load of a MoE model (each layer's shares sum to about
# 100%), and no expert load for a dense model; the reported loss includes the balance term
log_opts=(--dim 16 --layers 2 --heads 2 --epochs 2 --batch 16 --optimizer adam --lr 0.01
          --dev-fraction 0.2 --seed 5)
"$GYRO" classify train "${log_opts[@]}" --ffn moe --experts 3 --top-k 1 -o moe.clf data.pb 2>moe.log
[ "$(grep -c '^epoch [0-9]*: train loss .*, expert load L0 [0-9]*/[0-9]*/[0-9]*% L1 [0-9]*/[0-9]*/[0-9]*%, ' moe.log)" = 2 ] ||
  { echo "no expert load line for a MoE model"; cat moe.log; exit 1; }
grep '^epoch ' moe.log | sed 's/.*expert load //; s/, [0-9.]* s$//' | tr ' ' '\n' | grep '%$' |
  awk '{ gsub("%", ""); n = split($0, p, "/"); s = 0; for (i = 1; i <= n; i++) s += p[i];
         if (s < 98 || s > 102) { print "expert shares sum to " s; exit 1 } }'
"$GYRO" classify train "${log_opts[@]}" -o dense.clf data.pb 2>dense.log
[ "$(grep -c '^epoch [0-9]*: train loss ' dense.log)" = 2 ] || { echo "no epoch line"; cat dense.log; exit 1; }
! grep -q 'expert load' dense.log || { echo "expert load for a dense model"; cat dense.log; exit 1; }

# one full-batch step: the first epoch's loss is that of the initial model, so --balance 10 adds
# 10 × Σ_layers Σ_i f_i P_i (about 1 per layer at a balanced start, 2 layers) to the same
# cross-entropy as --balance 0
for a in 0 10; do
  "$GYRO" classify train "${log_opts[@]}" --epochs 1 --batch 1000 --ffn moe --experts 3 --balance "$a" \
    -o "bal$a.clf" data.pb 2>"bal$a.log"
done
l0=$(sed -n 's/^epoch 1: train loss \([0-9.]*\),.*/\1/p' bal0.log)
l10=$(sed -n 's/^epoch 1: train loss \([0-9.]*\),.*/\1/p' bal10.log)
awk -v a="$l0" -v b="$l10" 'BEGIN { exit !(a > 0 && b - a > 10 && b - a < 40) }' ||
  { echo "balance term not in the reported loss: $l0 (alpha 0) vs $l10 (alpha 10)"; exit 1; }

# bad block options: exit 2
st=0; "$GYRO" classify train "${opts[@]}" --ffn moe --experts 4 --top-k 5 -o bad.clf data.pb 2>err.txt || st=$?
[ "$st" = 2 ] || { echo "top-k > experts: exit $st"; exit 1; }
st=0; "$GYRO" classify train "${opts[@]}" --experts 4 -o bad.clf data.pb 2>err.txt || st=$?
[ "$st" = 2 ] || { echo "--experts without --ffn moe: exit $st"; exit 1; }
grep -q 'MoE' err.txt
st=0; "$GYRO" classify train "${opts[@]}" --attention gqa -o bad.clf data.pb 2>err.txt || st=$?
[ "$st" = 2 ] || { echo "--attention gqa: exit $st"; exit 1; }
st=0; "$GYRO" classify train "${opts[@]}" --ffn wide -o bad.clf data.pb 2>err.txt || st=$?
[ "$st" = 2 ] || { echo "--ffn wide: exit $st"; exit 1; }
[ ! -e bad.clf ]
echo ok

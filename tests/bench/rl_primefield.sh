#!/usr/bin/env bash
# rl_primefield.sh — the seed's Table 2 (rl-hyperbolic-transformer-grpo, prime-field continuous
# extension): Vanilla-T against Hyper-T (one block of width 32, MLA + MoE, GRPO with Adam) on the
# primefield environment (models/rl/env_primefield.h: the answer p = 9811 written digit by
# digit). For each seed and geometry it records
#   - updates to hit: the first gradient-step count at which the greedy policy writes 9811
#     (evaluated after every iteration; "never" if not within ITER iterations),
#   - the greedy miss: 1 if the greedy policy's answer is wrong at the end, else 0 (its mean over
#     seeds is the miss-prediction rate of the seed's table),
#   - the sampled miss rate: the share of EVAL sampled episodes of the final policy that miss,
#   - CPU seconds of the training loop; the two geometries of a seed run back to back so they
#     share the machine's load, and the CPU-time ratio Hyper-T/Vanilla-T is taken over the
#     medians of this one run.
#
#   tests/bench/rl_primefield.sh [GYRO]        (default build/gyro; run from the project root)
#
# Knobs (defaults in brackets): SEEDS ["1 2 3 4 5 6"], ITER [400] iterations, STATES [16],
# GROUP [8], EPOCHS [2], LR [1e-3], EVAL [200] sampled evaluation episodes, OUT [a temporary
# directory: raw summary lines in $OUT/runs.txt].
set -euo pipefail
GYRO=${1:-${GYRO:-build/gyro}}
SEEDS=${SEEDS:-"1 2 3 4 5 6"}
ITER=${ITER:-400}
STATES=${STATES:-16}
GROUP=${GROUP:-8}
EPOCHS=${EPOCHS:-2}
LR=${LR:-1e-3}
EVAL=${EVAL:-200}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
runs="$OUT/runs.txt"
: > "$runs"
[ -x "$GYRO" ] || { echo "rl_primefield: no gyro binary at $GYRO (run make first)" >&2; exit 1; }
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

echo "# rl_primefield: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# seeds: $SEEDS; lr $LR; $ITER iterations of $STATES states x $GROUP episodes; $EPOCHS epochs"
for seed in $SEEDS; do
  for geo in euclidean hyperbolic; do
    model="$OUT/pf-$geo-$seed.pol"
    line=$("$GYRO" rl finetune --env primefield --geometry "$geo" --seed "$seed" --iterations "$ITER" \
             --states "$STATES" --group "$GROUP" --epochs "$EPOCHS" --lr "$LR" --greedy-eval --eval 1 \
             --eval-every 1 --target 0.5 -q --out "$model")
    ev=$("$GYRO" rl eval --model "$model" --eval "$EVAL" --seed "$seed")
    echo "$line sampled_miss=$(field "$ev" mean_metric)" >> "$runs"
    echo "# $line" >&2
  done
done

awk '
function get(k,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "" }
function median(a, n,   i, j, t) {
  for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
  g = get("geometry"); n[g]++
  st = get("steps_to_target") + 0
  if (st >= 0) { hit[g]++; ss[g] += st; ss2[g] += st * st; hs[g] = hs[g] " " st } else hs[g] = hs[g] " never"
  miss[g] += get("final_metric") + 0
  sm[g] += get("sampled_miss") + 0
  cpu[g, n[g]] = get("cpu_seconds") + 0
}
END {
  print "| backbone | updates to hit (mean ± sd over hits) | hits | greedy miss rate | sampled miss rate | CPU s (median) | CPU ratio |"
  print "| --- | --- | --- | --- | --- | --- | --- |"
  for (k = 1; k <= 2; k++) {
    g = k == 1 ? "euclidean" : "hyperbolic"
    if (!n[g]) continue
    for (i = 1; i <= n[g]; i++) c[i] = cpu[g, i]
    med[g] = median(c, n[g])
    if (hit[g]) { m = ss[g] / hit[g]; sd = hit[g] > 1 ? sqrt((ss2[g] - hit[g] * m * m) / (hit[g] - 1)) : 0; u = sprintf("%.0f ± %.0f", m, sd) } else u = "never"
    printf "| %s | %s | %d/%d (%s) | %.2f | %.3f | %.1f | %.2f |\n", g == "euclidean" ? "Vanilla-T" : "Hyper-T", u, hit[g], n[g], substr(hs[g], 2), miss[g] / n[g], sm[g] / n[g], med[g], med[g] / med["euclidean"]
  }
}' "$runs"
echo "# raw runs: $runs"

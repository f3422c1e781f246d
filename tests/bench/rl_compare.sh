#!/usr/bin/env bash
# rl_compare.sh — the seed's comparison (rl-hyperbolic-transformer-grpo, Tables 1, 3, 4):
# Vanilla-T against Hyper-T, both one block of width 32 with MLA (KV latent 32) and an MoE FFN
# (1 shared + 4 routed experts, top-1), and Lorentz-T, one Lorentz transformer block of width 32
# on the hyperboloid (4 heads of 8, FFN 32; no MLA, no MoE: models/rl/policy.h), trained by GRPO
# with Adam, six seeds each, on root finding, Van der Pol and the unicycle. For every run it records the gradient steps until
# the evaluated metric first falls below the target (root: MAE < 1e-6), the final metric (MAE or
# J; median and mean ± sd over the seeds), and the wall-clock and CPU time of the training loop;
# the geometries of a seed run back to back so they share the machine's load, and the ratios are
# taken within this one run.
#
#   tests/bench/rl_compare.sh [GYRO]        (default build/gyro; run from the project root)
#
# Environment knobs (defaults in brackets): SEEDS ["1 2 3 4 5 6"], ENVS ["root vdp unicycle"],
# GEOMS ["euclidean hyperbolic lorentz"],
# ITER_ROOT [150], ITER_CTRL [30] iterations; STATES [16], GROUP [8] (episodes per iteration =
# STATES·GROUP; the seed used 1024), EPOCHS [2], LR [1e-3; the seed used 3e-4 over ~10k
# updates], EVAL [32] evaluation episodes (sampled actions, fixed seed), OUT [a temporary
# directory: raw summary lines in $OUT/runs.txt]. Figures go to stdout as a Markdown table.
# The evaluation runs after every iteration, so "steps to target" has the resolution of one
# iteration (EPOCHS gradient steps).
set -euo pipefail
GYRO=${1:-${GYRO:-build/gyro}}
SEEDS=${SEEDS:-"1 2 3 4 5 6"}
ENVS=${ENVS:-"root vdp unicycle"}
GEOMS=${GEOMS:-"euclidean hyperbolic lorentz"}
ITER_ROOT=${ITER_ROOT:-150}
ITER_CTRL=${ITER_CTRL:-30}
STATES=${STATES:-16}
GROUP=${GROUP:-8}
EPOCHS=${EPOCHS:-2}
EVAL=${EVAL:-32}
LR=${LR:-1e-3}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
runs="$OUT/runs.txt"
: > "$runs"
[ -x "$GYRO" ] || { echo "rl_compare: no gyro binary at $GYRO (run make first)" >&2; exit 1; }

echo "# rl_compare: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# seeds: $SEEDS; lr $LR; iterations root $ITER_ROOT, control $ITER_CTRL; $STATES states x $GROUP episodes; $EPOCHS epochs"
for env in $ENVS; do
  iters=$ITER_CTRL
  [ "$env" = root ] && iters=$ITER_ROOT
  for seed in $SEEDS; do
    for geo in $GEOMS; do
      line=$("$GYRO" rl finetune --env "$env" --geometry "$geo" --seed "$seed" --iterations "$iters" \
               --states "$STATES" --group "$GROUP" --epochs "$EPOCHS" --lr "$LR" --eval "$EVAL" --eval-every 1 \
               --target 1e-6 -q)
      echo "$line" >> "$runs"
      echo "# $line" >&2
    done
  done
done

awk -v geoms="$GEOMS" '
function get(k,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "" }
{
  key = get("env") SUBSEP get("geometry")
  n[key]++; envs[get("env")] = 1
  m = get("final_metric") + 0; sm[key] += m; sm2[key] += m * m; vals[key, n[key]] = m
  rw = get("final_reward") + 0; sr[key] += rw; sr2[key] += rw * rw
  st = get("steps_to_target") + 0
  if (st >= 0) { hit[key]++; ss[key] += st; ss2[key] += st * st }
  wall[key] += get("seconds"); cpu[key] += get("cpu_seconds")
  metric[get("env")] = get("metric"); steps[key] = get("steps")
}
function mean(s, k) { return n[k] ? s / n[k] : 0 }
function sd(s, s2, c) { return c > 1 ? sqrt((s2 - s * s / c) / (c - 1)) : 0 }
function median(k,   i, j, c, t, a) {
  c = n[k]; for (i = 1; i <= c; i++) a[i] = vals[k, i]
  for (i = 2; i <= c; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
}
END {
  ng = split(geoms, glist, " ")
  name["euclidean"] = "Vanilla-T"; name["hyperbolic"] = "Hyper-T"; name["lorentz"] = "Lorentz-T"
  printf "\n| env | backbone | runs | steps to target (mean ± sd, runs that reached it) | final metric: median (mean ± sd) | final reward (mean ± sd) | wall-clock | CPU |\n"
  printf "|---|---|---|---|---|---|---|---|\n"
  for (e in envs) for (g = 1; g <= ng; g++) {
    geo = glist[g]; k = e SUBSEP geo; kv = e SUBSEP glist[1]
    if (!n[k]) continue
    tt = hit[k] ? sprintf("%.0f ± %.0f (%d/%d)", ss[k] / hit[k], sd(ss[k], ss2[k], hit[k]), hit[k], n[k]) : sprintf("never (0/%d, %s steps each)", n[k], steps[k])
    printf "| %s | %s | %d | %s | %s %.3g (%.3g ± %.2g) | %.4g ± %.2g | %.2f | %.2f |\n", e, name[geo], n[k], tt, metric[e], median(k), sm[k] / n[k], sd(sm[k], sm2[k], n[k]), sr[k] / n[k], sd(sr[k], sr2[k], n[k]), wall[kv] ? wall[k] / wall[kv] : 0, cpu[kv] ? cpu[k] / cpu[kv] : 0
  }
  printf "\nwall-clock and CPU are totals over the seeds, normalised to the first geometry (%s) of the same environment.\n", name[glist[1]]
}' "$runs"
echo "raw runs: $runs"

#!/usr/bin/env bash
# hrm_sudoku.sh — the hierarchical reasoning model on 9x9 Sudoku (issue bar of models/hrm.h):
#   1. HRM (one-step gradient, deep supervision, ACT) against a plain transformer with the same
#      parameters (gyro hrm train --plain: the same two blocks applied once, N = T = M = 1),
#      both trained for the same CPU time on the same puzzles of a fixed difficulty band, then
#      evaluated on held-out puzzles of the band: cell accuracy (blank cells), exact-solve rate;
#   2. ACT against always running M_max segments (the same HRM model, gyro hrm eval with and
#      without --no-act): mean segments and accuracy;
#   3. training CPU time per epoch and peak memory (RSS) against N*T, one-step gradient against
#      full BPTT (one epoch each on MEM_N puzzles).
# Every figure is the median of the seeds; the HRM and the plain run of a seed run back to back
# so they share the machine's load. The anchor (HRM paper, Wang et al. 2025): 55% exact on
# Sudoku-Extreme with 1,000 training puzzles and 27M parameters, transformers of that size ~0%.
#
#   tests/bench/hrm_sudoku.sh [GYRO]          (default build/gyro; run from the project root)
#
# Knobs [defaults]: SEEDS ["1 2 3"], TRAIN_N [1000] and TEST_N [1000] puzzles, CLUES [60],
# MAX_NODES [21], MIN_ROUNDS [0] and MAX_ROUNDS [2; 0: none] (the band: puzzles of CLUES clues whose
# reference search needs at most MAX_NODES nodes and that singles solve in MIN_ROUNDS..MAX_ROUNDS
# rounds of propagation, gyro sudoku generate --min-rounds/--max-rounds), CPU [1200] CPU seconds
# of training per run, DIM [128], N [1], T [1], M [2], LR [1e-3],
# DS_START [0.3: hrm train --ds-start, the share of the budget trained with one segment per puzzle
# before deep supervision starts], ACT_START [0.9: hrm train --act-start, the share of the budget
# before ACT may halt a puzzle early], EPS [0.1: hrm train --act-eps], Q_WEIGHT [0.5: the Q head's
# loss weight], Q_POOL [cells: hrm train --q-pool, how the Q head pools the cells], SEG_LIST ["1 2 3"; the HRM's test accuracy after a fixed number of segments],
# BATCH [32], MEM_N [32], NT_LIST ["1x1 2x2 4x4"], AUGMENT [1: hrm train --augment, a random
# symmetry of each puzzle per batch, for every model], KINDS ["hrm plain"; also "flat": the HRM
# recurrence with one segment, no deep supervision nor ACT], OUT [a temporary directory: raw lines].
set -euo pipefail
GYRO=${1:-${GYRO:-build/gyro}}
SEEDS=${SEEDS:-"1 2 3"}
TRAIN_N=${TRAIN_N:-1000}
TEST_N=${TEST_N:-1000}
CLUES=${CLUES:-60}
MAX_NODES=${MAX_NODES:-21}
MIN_ROUNDS=${MIN_ROUNDS:-0}
MAX_ROUNDS=${MAX_ROUNDS:-2}
CPU=${CPU:-1200}
DIM=${DIM:-128}
N=${N:-1}
T=${T:-1}
M=${M:-2}
LR=${LR:-1e-3}
DS_START=${DS_START:-0.3}
ACT_START=${ACT_START:-0.9}
EPS=${EPS:-0.1}
SEG_LIST=${SEG_LIST:-"1 2 3"}
Q_WEIGHT=${Q_WEIGHT:-0.5}
Q_POOL=${Q_POOL:-cells}
BATCH=${BATCH:-32}
MEM_N=${MEM_N:-32}
NT_LIST=${NT_LIST:-"1x1 2x2 4x4"}
AUGMENT=${AUGMENT:-1}
KINDS=${KINDS:-"hrm plain"}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
runs="$OUT/runs.txt"
: > "$runs"
[ -x "$GYRO" ] || { echo "hrm_sudoku: no gyro binary at $GYRO (run make first)" >&2; exit 1; }
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else printf "%.4g\n", (v[NR/2]+v[NR/2+1])/2}'; }
col() { grep "^$1 " "$runs" | tr ' ' '\n' | sed -n "s/^$2=//p" | median; }

echo "# hrm_sudoku: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# band: $CLUES clues, <= $MAX_NODES search nodes, $MIN_ROUNDS..$MAX_ROUNDS rounds of singles (0: no bound);"
echo "# $TRAIN_N training / $TEST_N test puzzles per seed;"
echo "# $CPU CPU s of training per run; C=$DIM, N=$N, T=$T, M_max=$M, lr $LR, batch $BATCH, augment $AUGMENT;"
echo "# HRM: deep supervision from $DS_START of the budget on, ACT from $ACT_START on, eps $EPS, Q weight $Q_WEIGHT, Q pool $Q_POOL;"
echo "# seeds: $SEEDS"
band=(--clues "$CLUES" --max-nodes "$MAX_NODES" --attempts 100000)
[ "$MIN_ROUNDS" != 0 ] && band+=(--min-rounds "$MIN_ROUNDS")
[ "$MAX_ROUNDS" != 0 ] && band+=(--max-rounds "$MAX_ROUNDS")
arch=(--dim "$DIM" --heads 4 --head-dim $((DIM / 4)) --ffn $((2 * DIM)) -b "$BATCH" -l "$LR")
# one training run and its evaluations: run KIND SEED
run() {
  local kind=$1 seed=$2 extra
  case $kind in
    hrm) extra=(-N "$N" -T "$T" -M "$M" --ds-start "$DS_START" --act-start "$ACT_START" --act-eps "$EPS"
                --q-weight "$Q_WEIGHT" --q-pool "$Q_POOL") ;;
    flat) extra=(-N "$N" -T "$T" -M 1) ;;
    plain) extra=(--plain) ;;
  esac
  local tr ev
  tr=$("$GYRO" hrm train -q "${arch[@]}" "${extra[@]}" "${aug[@]}" -s "$seed" -e 100000 --cpu-seconds "$CPU" \
       -o "$OUT/$kind-$seed.bin" "$OUT/train-$seed.txt")
  ev=$("$GYRO" hrm eval -m "$OUT/$kind-$seed.bin" "$OUT/test-$seed.txt" | sed 's/\([a-z_]*\)=/eval_\1=/g')
  echo "$kind seed=$seed $tr $ev" >> "$runs"
  # the same model on the test puzzles of each number of rounds (field 5 of the lines)
  for f in "$OUT"/test-$seed-r*.txt; do
    [ -e "$f" ] || continue
    local k=${f##*-r}; k=${k%.txt}
    echo "${kind}_r$k seed=$seed $("$GYRO" hrm eval -m "$OUT/$kind-$seed.bin" "$f")" >> "$runs"
  done
  if [ "$kind" = hrm ]; then
    ev=$("$GYRO" hrm eval --no-act -m "$OUT/$kind-$seed.bin" "$OUT/test-$seed.txt")
    echo "hrm_mmax seed=$seed $ev" >> "$runs"
    for k in $SEG_LIST; do
      ev=$("$GYRO" hrm eval --no-act -M "$k" -m "$OUT/$kind-$seed.bin" "$OUT/test-$seed.txt")
      echo "hrm_seg$k seed=$seed $ev" >> "$runs"
    done
  fi
}
aug=(--no-augment); [ "$AUGMENT" = 1 ] && aug=(--augment)
for seed in $SEEDS; do
  "$GYRO" sudoku generate -q "${band[@]}" --seed $((1000 + seed)) -n "$TRAIN_N" -o "$OUT/train-$seed.txt"
  "$GYRO" sudoku generate -q "${band[@]}" --seed $((2000 + seed)) -n "$TEST_N" -o "$OUT/test-$seed.txt"
  awk -F'\t' -v p="$OUT/test-$seed-r" '$5 >= 0 {print > (p $5 ".txt")}' "$OUT/test-$seed.txt"
  # the kinds of a seed run two at a time, side by side, so that they share the machine's load
  set -- $KINDS
  while [ $# -gt 0 ]; do
    run "$1" "$seed" &
    if [ $# -gt 1 ]; then run "$2" "$seed" & shift; fi
    shift
    wait
  done
done

echo
echo "## HRM vs plain transformer, same parameters and CPU time (medians of seeds $SEEDS)"
printf "%-28s %8s %9s %8s %7s %8s %6s %10s %9s %10s\n" model params train_cpu epochs steps cell_acc exact mean_segs peak_MiB train_acc
for kind in $KINDS; do
  case $kind in
    hrm) name="HRM N=$N T=$T M=$M (ACT)" ;;
    flat) name="HRM N=$N T=$T M=1" ;;
    plain) name="plain (2 blocks, 1 pass)" ;;
  esac
  printf "%-28s %8s %9s %8s %7s %8s %6s %10s %9s %10s\n" "$name" "$(col $kind params)" "$(col $kind cpu_seconds)" \
    "$(col $kind epochs)" "$(col $kind steps)" "$(col $kind eval_cell_accuracy)" "$(col $kind eval_exact)" "$(col $kind eval_mean_segments)" \
    "$(col $kind peak_rss_mib)" "$(col $kind train_cell_accuracy)"
done
echo
echo "## exact-solve rate by the rounds of singles propagation a test puzzle needs (medians)"
rounds=$(ls "$OUT" | sed -n 's/^test-[0-9]*-r\([0-9]*\)\.txt$/\1/p' | sort -un)
printf "%-28s" model; for k in $rounds; do printf " %9s" "r$k"; done; echo
for kind in $KINDS; do
  printf "%-28s" "$kind"; for k in $rounds; do printf " %9s" "$(col ${kind}_r$k exact)"; done; echo
done
echo
echo "## ACT vs always M_max (the same HRM models, test puzzles)"
printf "%-22s %9s %7s %10s\n" eval cell_acc exact mean_segs
printf "%-22s %9s %7s %10s\n" "ACT (Q_halt > Q_cont)" "$(col hrm eval_cell_accuracy)" "$(col hrm eval_exact)" "$(col hrm eval_mean_segments)"
printf "%-22s %9s %7s %10s\n" "always M_max" "$(col hrm_mmax cell_accuracy)" "$(col hrm_mmax exact)" "$(col hrm_mmax mean_segments)"
for k in $SEG_LIST; do
  printf "%-22s %9s %7s %10s\n" "always $k segments" "$(col hrm_seg$k cell_accuracy)" "$(col hrm_seg$k exact)" "$k"
done

echo
echo "## memory and time against N*T: one epoch of $MEM_N puzzles, M=1, batch $BATCH (seed 1)"
printf "%-6s %-9s %12s %10s\n" N*T gradient cpu_seconds peak_MiB
head -n "$MEM_N" "$OUT/train-$(set -- $SEEDS; echo "$1").txt" > "$OUT/mem.txt"
for nt in $NT_LIST; do
  n=${nt%x*}; t=${nt#*x}
  for g in one-step bptt; do
    flag=(); [ $g = bptt ] && flag=(--bptt)
    r=$("$GYRO" hrm train -q "${arch[@]}" -N "$n" -T "$t" -M 1 "${flag[@]}" -e 1 -o "$OUT/mem.bin" "$OUT/mem.txt")
    echo "mem nt=$((n * t)) grad=$g $r" >> "$runs"
    printf "%-6s %-9s %12s %10s\n" "$((n * t))" "$g" "$(field "$r" cpu_seconds)" "$(field "$r" peak_rss_mib)"
  done
done
echo
echo "# anchor: HRM paper (Wang et al. 2025): Sudoku-Extreme (hard minimal puzzles), 1,000 training"
echo "# puzzles, 27M parameters, trained on GPUs: 55% exact; same-size transformers ~0%. Here: the"
echo "# band above, $(col hrm params) parameters, $CPU CPU seconds per run on $(nproc) shared cores."
echo "# raw lines: $runs"

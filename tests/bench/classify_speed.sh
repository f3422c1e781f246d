#!/usr/bin/env bash
# classify_speed.sh — training steps/s and single-utterance latency of gyro's intent-classifier
# transformer against the same model in PyTorch on the CPU (tests/bench/torch_twin.py, Debian's
# python3-torch via /usr/bin/python3), side by side in one run, interleaved, median of RUNS.
#
#   tests/bench/classify_speed.sh [BUILD_DIR]        env: RUNS (5), STEPS (20), LAT (200)
#
# Rates are per CPU-second of the process (steps_per_s; the wall-clock rate is printed by each
# side as steps_per_wall_s), latencies the calling thread's CPU time per forward.
# gyro runs on one thread (OPENBLAS_NUM_THREADS=1) and so does PyTorch (torch_twin.py's
# TORCH_THREADS, default 1; set TORCH_THREADS=2 for PyTorch's own default on this machine, the
# setting of ../shared/anchors/README.md's figures).
# TWIN_BLOCK=tangent-ln times both sides' hyperbolic models with the block `gyro classify train
# --arch transformer` trains (tangent residuals, hyperbolic LayerNorm, ReLU) instead of the seed's.
# For the Euclidean configurations the bound set by the dense products is printed after the table:
# their CPU time alone (classify_speed.c's gemm_ms, median over the runs) against PyTorch's step.
# Configurations: the seed's hyperbolic model (100-d, 3 layers, 16 heads, FFN 400) and the
# Euclidean twin (128-d) on NLPCC-sized batches (32 × 12 tokens, 11 classes), and the anchor's
# Euclidean shape (100-d, 4 heads, 125 classes, batch 64 × 32).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
RUNS=${RUNS:-5} STEPS=${STEPS:-20} LAT=${LAT:-200}
cd "$root"
make -s BUILD="$build" "$build/libgyro.a" >/dev/null
bin=$(mktemp -d)/classify_speed
pk="icu-uc icu-i18n libutf8proc openblas libprotobuf-c grpc"
cc -std=c11 -O2 -march=native -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -I"$build/gen" \
   $(pkg-config --cflags $pk) tests/bench/classify_speed.c "$build/libgyro.a" \
   $(pkg-config --libs $pk) -lz -lm -lpthread -o "$bin"
echo "torch: $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'), BLAS: $(update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null | awk '/^Value:/ {print $2}')"
echo "runs=$RUNS steps=$STEPS latency_runs=$LAT  $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"

configs=(
  "hyperbolic 100 3 16 400 11 3000 32 12"
  "euclidean 128 3 16 512 11 3000 32 12"
  "euclidean 100 3 4 400 125 3340 64 32"
)
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
printf '%-44s %10s %10s %7s %12s %12s %12s %12s %7s\n' config gyro_st/s torch_st/s ratio gyro_lat_ms torch_lat_ms gyro_p99 torch_p99 ratio
floors=()
for cfg in "${configs[@]}"; do
  g_sps=(); t_sps=(); g_lat=(); t_lat=(); g_p99=(); t_p99=(); g_mm=()
  for r in $(seq "$RUNS"); do
    g=$(OPENBLAS_NUM_THREADS=1 "$bin" $cfg "$STEPS" "$LAT")
    t=$(OPENBLAS_NUM_THREADS=1 /usr/bin/python3 tests/bench/torch_twin.py $cfg "$STEPS" "$LAT")
    g_sps+=("$(field steps_per_s <<<"$g")"); t_sps+=("$(field steps_per_s <<<"$t")")
    g_lat+=("$(field latency_median_ms <<<"$g")"); t_lat+=("$(field latency_median_ms <<<"$t")")
    g_p99+=("$(field latency_p99_ms <<<"$g")"); t_p99+=("$(field latency_p99_ms <<<"$t")")
    g_mm+=("$(field gemm_ms <<<"$g")")
  done
  gs=$(printf '%s\n' "${g_sps[@]}" | median); ts=$(printf '%s\n' "${t_sps[@]}" | median)
  gl=$(printf '%s\n' "${g_lat[@]}" | median); tl=$(printf '%s\n' "${t_lat[@]}" | median)
  gp=$(printf '%s\n' "${g_p99[@]}" | median); tp=$(printf '%s\n' "${t_p99[@]}" | median)
  printf '%-44s %10.2f %10.2f %6.2fx %12.3f %12.3f %12.3f %12.3f %6.2fx\n' "$cfg" "$gs" "$ts" \
    "$(awk -v a="$gs" -v b="$ts" 'BEGIN{print a/b}')" "$gl" "$tl" "$gp" "$tp" \
    "$(awk -v a="$gl" -v b="$tl" 'BEGIN{print b/a}')"
  gm=$(printf '%s\n' "${g_mm[@]}" | median)
  if [ "${cfg%% *}" = euclidean ]; then # the dense products alone: what no other work can undercut
    floors+=("$(awk -v c="$cfg" -v m="$gm" -v t="$ts" 'BEGIN {
      printf "%s: the step'"'"'s dense products alone take %.2f CPU ms (OpenBLAS, 1 thread); PyTorch takes %.2f ms per step, so with these products on OpenBLAS gyro is at most %.2fx PyTorch, all other work free", c, m, 1e3 / t, (1e3 / t) / m }')")
  fi
  case "$cfg" in # make bench's closing table: the seed's shape and its twin, against their goals
    "hyperbolic 100 3 16 400 11 "*) goal=5 what="hyperbolic seed shape" ;;
    "euclidean 128 3 16 512 11 "*) goal=3 what="Euclidean twin" ;;
    *) goal= ;;
  esac
  [ -n "$goal" ] && awk -v g="$gs" -v t="$ts" -v goal="$goal" -v w="$what" 'BEGIN {
    printf "TABLE | classifier training steps per CPU-second, %s, 1 thread | %.2f | PyTorch %.2f | %.2f | >= %gx | %s |\n",
           w, g, t, g / t, goal, (g / t >= goal ? "met" : "not met") }'
done
echo "(config = geometry dim layers heads ffn classes vocab batch seq; ratios = gyro speed / torch speed)"
for f in "${floors[@]}"; do echo "$f"; done

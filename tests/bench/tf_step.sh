#!/usr/bin/env bash
# tf_step.sh — build tests/bench/tf_step.c against the library and time the neural core:
# training steps (batch 32 of 20 characters) and single-utterance inference, hyperbolic, Lorentz and
# Euclidean, each run REPS times (default 5); prints every run, then the medians. BLOCKS=1
# (third argument) times the MLA + MoE variant of both configurations instead (see tf_step.c).
#   tests/bench/tf_step.sh [REPS] [BUILD] [BLOCKS]
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
reps=${1:-5}
build=${2:-${GYRO_BUILD:-build}}
blocks=${3:-0}
cd "$here"
make --no-print-directory -s BUILD="$build" "$build/libgyro.a"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -std=c11 -O2 -march=native -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. \
   $(pkg-config --cflags openblas) tests/bench/tf_step.c "$build/libgyro.a" \
   $(pkg-config --libs openblas) -lm -lpthread -o "$out/tf_step"
geos="1 2 0"; [ "$blocks" = 1 ] && geos="1 0" # 2: Lorentz (no MLA / MoE there)
for geo in $geos; do
  for i in $(seq "$reps"); do nice "$out/tf_step" "$geo" 32 20 30 1 "$blocks"; done | tee "$out/runs.$geo"
done
echo "== medians of $reps runs"
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for geo in $geos; do
  f="$out/runs.$geo"
  step=$(sed -E 's/.*step median ([0-9.]+) ms.*/\1/' "$f" | median)
  cpu=$(sed -E 's/.*cpu\/step ([0-9.]+) ms.*/\1/' "$f" | median)
  inf=$(sed -E 's/.*inference T=[0-9]+ median ([0-9.]+) ms.*/\1/' "$f" | median)
  p99=$(sed -E 's/.*p99 ([0-9.]+) ms.*/\1/' "$f" | median)
  printf '%s: train step %s ms (cpu %s ms/step), inference %s ms (p99 %s ms)\n' \
    "$(case $geo in 1) echo hyperbolic ;; 2) echo lorentz ;; *) echo euclidean ;; esac)$([ "$blocks" = 1 ] && echo ' MLA+MoE')" "$step" "$cpu" "$inf" "$p99"
done

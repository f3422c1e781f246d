#!/usr/bin/env bash
# classify_latency.sh — CPU time of one gyro_classifier_predict (raw text → normalizer → token
# ids → model forward → top 5) on NLPCC 2018 utterances: the per-request inference cost of
# `gyro serve` Classify, for the seed's hyperbolic transformer (100-d, 3 layers, 16 heads, FFN
# 400: `classify train --arch transformer`) and for the n-gram model (`classify train`'s
# default, --arch ngrams).
#
#   tests/bench/classify_latency.sh [BUILD_DIR]
#     env: ARCHS ("transformer ngrams")  MODEL (a classifier file, used for every arch instead
#          of training one for EPOCHS (1) on the first LIMIT (2000) utterances — inference cost
#          does not depend on how long it trained)
#          N (2000 utterances, from record 10,001 of corpus.train.txt on)  REPS (3 per run)
#          RUNS (5)
#          BEFORE (a second build directory holding a libgyro.a, e.g. of an earlier commit)
#          or BEFORE_REV (a git revision: its tree is exported to a temporary directory and its
#          libgyro.a built there, OPT and ARCH_FLAGS as for BUILD_DIR) — measured in the same
#          runs, interleaved with BUILD_DIR's, and its class probabilities compared with
#          BUILD_DIR's on every utterance (largest difference < 1e-5 required)
#
#          TWIN (1: the transformer's anchor, tests/bench/torch_twin.py with PyTorch on the same
#          thread count (1: TORCH_THREADS and OPENBLAS_NUM_THREADS), the same block
#          (TWIN_BLOCK=tangent-ln, what `classify train` trains) and the same sequence lengths
#          (the N utterances' characters after gyro's normalization); 0 skips it; skipped when
#          /usr/bin/python3 has no torch)
#
# Per run: median, p99 and mean CPU µs per call over N·REPS calls (thread CPU clock: stable on
# a loaded machine), calls per CPU-second; the script prints every run, the median over RUNS
# of each figure, and per arch one line: before, after, speed-up, the PyTorch twin and the
# ratio to it, and the goal of ≤ 80 CPU µs per utterance (mean) met or not; then the same as
# `TABLE |` rows of make bench's closing table. The twin's forward
# is timed alone (no text normalization), gyro's call includes normalization and tokenizing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
RUNS=${RUNS:-5} N=${N:-2000} REPS=${REPS:-3} EPOCHS=${EPOCHS:-1} LIMIT=${LIMIT:-2000}
ARCHS=${ARCHS:-transformer ngrams} GOAL_US=${GOAL_US:-80} TWIN=${TWIN:-1}
corpus=../shared/corpora/intent/nlpcc2018/corpus.train.txt
cd "$root"
[ -f "$corpus" ] || { echo "no $corpus"; exit 77; }
make -s BUILD="$build" "$build/libgyro.a" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pk="icu-uc icu-i18n libutf8proc openblas libprotobuf-c grpc"
link() { # link SRC_ROOT LIBDIR OUT: the benchmark against that tree's headers and library
  cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$1" -I"$2/gen" \
     $(pkg-config --cflags $pk) tests/bench/classify_latency.c "$2/libgyro.a" \
     $(pkg-config --libs $pk) -lz -lm -lpthread -o "$3"
}
link . "$build" "$work/after"
before_src=
if [ -n "${BEFORE_REV:-}" ]; then
  echo "building libgyro.a of $BEFORE_REV ($(git rev-parse --short "$BEFORE_REV"))..."
  before_src=$work/before-src
  mkdir -p "$before_src"
  git archive "$BEFORE_REV" | tar -x -C "$before_src"
  make -s -C "$before_src" -j2 build/libgyro.a ${OPT:+OPT="$OPT"} \
       ${ARCH_FLAGS+ARCH_FLAGS="$ARCH_FLAGS"} >/dev/null
  BEFORE=$before_src/build
fi
# a build directory inside a source tree (…/src/build) is linked against that tree's headers
[ -n "${BEFORE:-}" ] && [ -z "$before_src" ] && [ -f "$BEFORE/../models/classifier.h" ] && before_src=$BEFORE/..
[ -n "${BEFORE:-}" ] && link "${before_src:-.}" "$BEFORE" "$work/before"
export OPENBLAS_NUM_THREADS=1 TORCH_THREADS=1
if [ "$TWIN" = 1 ] && ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "(no PyTorch for /usr/bin/python3: the twin is skipped; apt-get install python3-torch)"
  TWIN=0
fi
echo "N=$N REPS=$REPS RUNS=$RUNS; 1 thread per side; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "after: $build${BEFORE:+; before: ${BEFORE_REV:-$BEFORE}}"

field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
sides=(after); [ -n "${BEFORE:-}" ] && sides=(before after)
summary=() rows=()
for arch in $ARCHS; do
  model=${MODEL:-}
  if [ -z "$model" ]; then
    echo "== $arch: training on $LIMIT NLPCC 2018 utterances ($EPOCHS epoch(s))..."
    nice "$work/after" train "$corpus" "$LIMIT" "$EPOCHS" "$work/model.$arch" "$arch"
    model=$work/model.$arch
  fi
  if [ -n "${BEFORE:-}" ]; then
    "$work/before" dump "$model" "$corpus" "$N" > "$work/p.before"
    "$work/after" dump "$model" "$corpus" "$N" > "$work/p.after"
    /usr/bin/python3 - "$work/p.before" "$work/p.after" <<'PY'
import sys
a = [l.split('\t') for l in open(sys.argv[1])]
b = [l.split('\t') for l in open(sys.argv[2])]
assert len(a) == len(b), "different numbers of utterances"
worst = 0.0; top = 0
for x, y in zip(a, b):
    dx = dict(f.rsplit('=', 1) for f in x[1:]); dy = dict(f.rsplit('=', 1) for f in y[1:])
    assert dx.keys() == dy.keys()
    top += x[1].rsplit('=', 1)[0] == y[1].rsplit('=', 1)[0]
    for k in dx:
        worst = max(worst, abs(float(dx[k]) - float(dy[k])))
print(f"probabilities: {len(a)} utterances, same top-1 on {top}, largest difference {worst:.3g}")
sys.exit(0 if worst < 1e-5 else 1)
PY
  fi
  twin=0
  if [ "$TWIN" = 1 ] && [ "$arch" = transformer ]; then
    twin=1
    "$work/after" lengths "$model" "$corpus" "$N" > "$work/lengths"
  fi
  for s in "${sides[@]}" twin; do : > "$work/runs.$s"; done
  for r in $(seq "$RUNS"); do
    for s in "${sides[@]}"; do
      line=$("$work/$s" bench "$model" "$corpus" "$N" "$REPS")
      echo "run $r $arch $s: $line"
      echo "$line" >> "$work/runs.$s"
    done
    if [ "$twin" = 1 ]; then # the seed shape, NLPCC's 11 classes, 3000 characters
      line=$(TWIN_BLOCK=tangent-ln TWIN_LENGTHS=$work/lengths /usr/bin/python3 tests/bench/torch_twin.py \
             hyperbolic 100 3 16 400 11 3000 1 12 0 "$N")
      echo "run $r $arch twin: $line"
      echo "$line" >> "$work/runs.twin"
    fi
  done
  for s in "${sides[@]}"; do
    printf '%-11s %-6s median of %d runs: median_us=%s p99_us=%s mean_us=%s calls_per_cpu_s=%s mean_chars=%s\n' \
      "$arch" "$s" "$RUNS" \
      "$(field median_us < "$work/runs.$s" | median)" "$(field p99_us < "$work/runs.$s" | median)" \
      "$(field mean_us < "$work/runs.$s" | median)" "$(field calls_per_cpu_s < "$work/runs.$s" | median)" \
      "$(field mean_chars < "$work/runs.$s" | median)"
  done
  a_mean=$(field mean_us < "$work/runs.after" | median)
  a_med=$(field median_us < "$work/runs.after" | median)
  b_mean=-1 b_med=-1 t_mean=-1 t_med=-1
  if [ -n "${BEFORE:-}" ]; then
    b_mean=$(field mean_us < "$work/runs.before" | median)
    b_med=$(field median_us < "$work/runs.before" | median)
  fi
  if [ "$twin" = 1 ]; then
    t_mean=$(field latency_mean_ms < "$work/runs.twin" | median | awk '{print 1000 * $1}')
    t_med=$(field latency_median_ms < "$work/runs.twin" | median | awk '{print 1000 * $1}')
    printf '%-11s %-6s median of %d runs: median_us=%s mean_us=%s (%s)\n' "$arch" twin "$RUNS" \
      "$t_med" "$t_mean" "$(tail -1 "$work/runs.twin" | tr ' ' '\n' | grep -E '^(threads|block|mean_len)=' | tr '\n' ' ')"
  fi
  summary+=("$(awk -v a="$arch" -v bm="$b_mean" -v am="$a_mean" -v bd="$b_med" -v ad="$a_med" \
    -v tm="$t_mean" -v td="$t_med" -v g="$GOAL_US" 'BEGIN {
      pair = "%.1f / %.1f"
      b = bm < 0 ? "—" : sprintf(pair, bm, bd); t = tm < 0 ? "—" : sprintf(pair, tm, td)
      sp = bm < 0 ? "—" : sprintf("%.2fx / %.2fx", bm / am, bd / ad)
      r = tm < 0 ? "—" : sprintf("%.1fx / %.1fx", tm / am, td / ad)
      printf "| predict CPU µs per NLPCC utterance, %s (mean / median) | %s | %s | %s | %s | %s | <= %g mean | %s |",
        a, b, sprintf(pair, am, ad), sp, t, r, g, (am <= g) ? "met" : "not met"}')")
  rows+=("$(awk -v a="$arch" -v am="$a_mean" -v ad="$a_med" -v tm="$t_mean" -v g="$GOAL_US" 'BEGIN {
      printf "TABLE | predict CPU µs per NLPCC utterance, %s, 1 thread | %.1f (median %.1f; %.0f calls per CPU-second) | %s | %s | <= %g | %s |",
        a, am, ad, 1e6 / am, tm < 0 ? "—" : sprintf("PyTorch twin %.0f", tm), tm < 0 ? "—" : sprintf("%.0fx", tm / am),
        g, (am <= g) ? "met" : "not met"}')")
done
echo
echo "| figure | gyro before | gyro after | speed-up | anchor: PyTorch twin, 1 thread | anchor / gyro | goal | met |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${summary[@]}"
echo
printf '%s\n' "${rows[@]}" # for make bench's closing table (tests/bench/run-all.sh)

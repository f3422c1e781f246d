#!/usr/bin/env bash
# classify_latency.sh — CPU time of one gyro_classifier_predict (raw text → normalizer → token
# ids → transformer forward → top 5) on NLPCC 2018 utterances, with the seed's hyperbolic
# architecture (100-d, 3 layers, 16 heads, FFN 400): the per-request inference cost of
# `gyro serve` Classify.
#
#   tests/bench/classify_latency.sh [BUILD_DIR]
#     env: MODEL (a classifier file; default: train one for EPOCHS (1) on the first LIMIT (2000)
#          utterances — inference cost does not depend on how long it trained)
#          N (2000 utterances, from record 10,001 of corpus.train.txt on)  REPS (3 per run)
#          RUNS (5)  BEFORE (a second build directory holding a libgyro.a, e.g. of an earlier
#          commit built from `git archive`: measured in the same runs, interleaved, and its
#          class probabilities compared with BUILD_DIR's on every utterance)
#
# Per run: median, p99 and mean CPU µs per call over N·REPS calls (thread CPU clock: stable on
# a loaded machine); the script prints every run and the median over RUNS of each figure.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
RUNS=${RUNS:-5} N=${N:-2000} REPS=${REPS:-3} EPOCHS=${EPOCHS:-1} LIMIT=${LIMIT:-2000}
corpus=../shared/corpora/intent/nlpcc2018/corpus.train.txt
cd "$root"
[ -f "$corpus" ] || { echo "no $corpus"; exit 77; }
make -s BUILD="$build" "$build/libgyro.a" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pk="icu-uc icu-i18n libutf8proc openblas libprotobuf-c grpc"
link() { # link LIBDIR OUT
  cc -std=c11 -O2 -march=native -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -I"$build/gen" \
     $(pkg-config --cflags $pk) tests/bench/classify_latency.c "$1/libgyro.a" \
     $(pkg-config --libs $pk) -lz -lm -lpthread -o "$2"
}
link "$build" "$work/after"
[ -n "${BEFORE:-}" ] && link "$BEFORE" "$work/before"
export OPENBLAS_NUM_THREADS=1
if [ -z "${MODEL:-}" ]; then
  echo "training the seed architecture on $LIMIT NLPCC 2018 utterances ($EPOCHS epoch(s))..."
  nice "$work/after" train "$corpus" "$LIMIT" "$EPOCHS" "$work/model"
  MODEL=$work/model
fi
echo "model $MODEL; N=$N REPS=$REPS RUNS=$RUNS; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -n "${BEFORE:-}" ]; then
  "$work/before" dump "$MODEL" "$corpus" "$N" > "$work/p.before"
  "$work/after" dump "$MODEL" "$corpus" "$N" > "$work/p.after"
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

field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
sides=(after); [ -n "${BEFORE:-}" ] && sides=(before after)
for s in "${sides[@]}"; do : > "$work/runs.$s"; done
for r in $(seq "$RUNS"); do
  for s in "${sides[@]}"; do
    line=$("$work/$s" bench "$MODEL" "$corpus" "$N" "$REPS")
    echo "run $r $s: $line"
    echo "$line" >> "$work/runs.$s"
  done
done
for s in "${sides[@]}"; do
  printf '%-6s median of %d runs: median_us=%s p99_us=%s mean_us=%s calls_per_cpu_s=%s mean_chars=%s\n' "$s" "$RUNS" \
    "$(field median_us < "$work/runs.$s" | median)" "$(field p99_us < "$work/runs.$s" | median)" \
    "$(field mean_us < "$work/runs.$s" | median)" "$(field calls_per_cpu_s < "$work/runs.$s" | median)" \
    "$(field mean_chars < "$work/runs.$s" | median)"
done

#!/usr/bin/env bash
# import.sh — speed of the labelled-data stages on the real shared sets: gyro import (NLPCC
# 2018, SMP2020, CrossWOZ read from its zip), gyro split (NLPCC, by session) and gyro generate
# music (16,332 examples, the seed paper's size).
#
#   tests/bench/import.sh [path/to/gyro] [runs]      (defaults: $GYRO or build/gyro, 5 runs)
#
# Each figure is the median of `runs` runs, by wall clock and by CPU time of the process
# (user + sys, less sensitive to other load on the machine), plus examples per CPU second.
# Run it on a quiet machine; it is niced.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
GYRO=${1:-${GYRO:-$root/build/gyro}}
RUNS=${2:-5}
I=${SHARED:-$root/../shared}/corpora/intent
[ -d "$I" ] || { echo "no intent corpora at $I" >&2; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

median() { sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# measure LABEL EXAMPLES command...: median wall and CPU seconds of RUNS runs
measure() {
  local label=$1 n=$2; shift 2
  local wall=() cpu=() i e u s
  for ((i = 0; i < RUNS; i++)); do
    /usr/bin/time -o "$OUT/time" -f '%e %U %S' nice "$@" > /dev/null 2>&1
    read -r e u s < "$OUT/time"
    wall+=("$e")
    cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.3f", u + s}')")
  done
  local mc; mc=$(printf '%s\n' "${cpu[@]}" | median)
  printf '%-38s %7d examples  wall %6.3f s  cpu %6.3f s  %9.0f examples/cpu-s  (wall runs: %s)\n' \
    "$label" "$n" "$(printf '%s\n' "${wall[@]}" | median)" "$mc" \
    "$(awk -v n="$n" -v c="$mc" 'BEGIN{print (c > 0) ? n / c : 0}')" "${wall[*]}"
}

cd "$root"
measure "import nlpcc (1.5 MB TSV)" 21352 \
  "$GYRO" import -q -f nlpcc -o "$OUT/nlpcc.ex" "$I/nlpcc2018/corpus.train.txt"
measure "import smp (0.98 MB JSON)" 5024 \
  "$GYRO" import -q -f smp -o "$OUT/smp.ex" "$I/smp2020/2020train.json"
measure "import crosswoz (zip, 38.9 MB JSON)" 4213 \
  "$GYRO" import -q --max-warnings 0 -f crosswoz -o "$OUT/cw.ex" "$I/crosswoz/val.json.zip"
"$GYRO" import -q -f nlpcc -o "$OUT/nlpcc.ex" "$I/nlpcc2018/corpus.train.txt"
measure "split nlpcc (seed 1, 10% dev)" 21352 \
  "$GYRO" split -q --seed 1 --dev 0.1 --train-out "$OUT/t" --dev-out "$OUT/d" "$OUT/nlpcc.ex"
measure "generate music (16332)" 16332 \
  "$GYRO" generate music -q --seed 1 -n 16332 -o "$OUT/music.ex"

#!/usr/bin/env bash
# classify_train_threads.sh — data-parallel `gyro classify train --threads N` against one thread
# on the NLPCC 2018 intent set (the session split of `gyro split --seed 1 --dev 0.1`, the seed's
# default hyperbolic model, batch 32), interleaved in one run, medians of RUNS.
#
#   tests/bench/classify_train_threads.sh          env: GYRO (build/gyro), RUNS (3), EPOCHS (1),
#                                                       THREADS ("1 2")
#
# Per thread count: optimizer steps per wall-second as `classify train` reports it (the training
# loop only: tokenization and the per-epoch dev evaluation excluded), the process's CPU time
# (user + system, /usr/bin/time: everything included) and steps per CPU-second, the best dev
# accuracy, and the speed-up in wall steps/s over the first thread count. The machine's load
# average is printed before every run: wall-clock rates only mean something on an idle machine,
# CPU-time rates are the figures to compare on a shared one.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
GYRO=${GYRO:-$root/build/gyro}
RUNS=${RUNS:-3} EPOCHS=${EPOCHS:-1} THREADS=${THREADS:-1 2}
corpus=../shared/corpora/intent/nlpcc2018/corpus.train.txt
[ -x "$GYRO" ] || { echo "no gyro binary at $GYRO (make first)"; exit 1; }
[ -r "$corpus" ] || { echo "skipped: $corpus not found"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$GYRO" import --format nlpcc -q "$corpus" -o "$tmp/nlpcc.pb"
"$GYRO" split --seed 1 --dev 0.1 --train-out "$tmp/tr.pb" --dev-out "$tmp/dev.pb" "$tmp/nlpcc.pb" 2>/dev/null
echo "runs=$RUNS epochs=$EPOCHS threads=($THREADS); $(nproc) cores; OpenBLAS on the calling thread (classify train's policy)"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -A sps cpu sys spc acc
printf '%-4s %-3s %6s %10s %9s %8s %10s %8s\n' run j load steps/s cpu_s sys_s steps/cpu_s dev_acc
for r in $(seq "$RUNS"); do
  for j in $THREADS; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f '%U %S' -o "$tmp/time" "$GYRO" classify train --epochs "$EPOCHS" --patience 0 -j "$j" \
      -o "$tmp/m.clf" "$tmp/tr.pb" > "$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
    read -r u s < "$tmp/time"
    line=$(grep -o '[0-9]* steps, [0-9.]* steps/s; best dev accuracy [0-9.]*%' "$tmp/out")
    steps=$(awk '{print $1}' <<<"$line"); rate=$(awk '{print $3}' <<<"$line")
    a=$(awk '{gsub("%","",$NF); print $NF}' <<<"$line")
    c=$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')
    pc=$(awk -v n="$steps" -v c="$c" 'BEGIN{printf "%.2f", n / c}')
    printf '%-4s %-3s %6s %10s %9s %8s %10s %8s\n' "$r" "$j" "$load" "$rate" "$c" "$s" "$pc" "$a"
    sps[$j]+="$rate "; cpu[$j]+="$c "; sys[$j]+="$s "; spc[$j]+="$pc "; acc[$j]+="$a "
  done
done
echo "medians:"
printf '%-3s %10s %9s %8s %10s %8s %8s\n' j steps/s cpu_s sys_s steps/cpu_s dev_acc speedup
base=
for j in $THREADS; do
  m() { tr ' ' '\n' <<<"$1" | grep . | median; }
  ms=$(m "${sps[$j]}"); base=${base:-$ms}
  printf '%-3s %10s %9s %8s %10s %8s %7.2fx\n' "$j" "$ms" "$(m "${cpu[$j]}")" "$(m "${sys[$j]}")" \
    "$(m "${spc[$j]}")" "$(m "${acc[$j]}")" "$(awk -v a="$ms" -v b="$base" 'BEGIN{print a / b}')"
done
echo "(steps/s: wall-clock, training loop only; cpu_s, sys_s: the whole process; speedup: wall steps/s over j=$(awk '{print $1}' <<<"$THREADS"))"

#!/usr/bin/env bash
# classify_train_threads.sh — data-parallel `gyro classify train --threads N` against one thread
# on the NLPCC 2018 intent set (the session split of `gyro split --seed 1 --dev 0.1`, the seed's
# hyperbolic transformer, --arch transformer, batch 32), interleaved in one run, medians of RUNS.
#
#   tests/bench/classify_train_threads.sh          env: GYRO (build/gyro), RUNS (3), EPOCHS (1),
#                                                       THREADS ("1 2")
#
# Per thread count: optimizer steps per wall-second as `classify train` reports it (the training
# loop only: tokenization and the per-epoch dev evaluation excluded), the process's CPU time
# (user + system, /usr/bin/time: everything included) and steps per CPU-second, steps per second
# of the loop's critical path (the per-epoch line's "critical path": the calling thread's CPU
# time outside the parallel jobs plus the slowest thread's in each job, which is the loop's wall
# time on an idle machine with a core per thread), the best dev accuracy, and the speed-ups over
# the first thread count in wall steps/s and in critical-path steps/s. The machine's load average
# is printed before every run: wall-clock rates only mean something on an idle machine (with
# the kernel's autogroup scheduling a busy shared machine gives a session the same CPU share
# however many threads it runs), CPU-time rates are the figures to compare on a shared one.
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
declare -A sps cpu sys spc scp acc
printf '%-4s %-3s %6s %10s %9s %8s %10s %11s %8s\n' run j load steps/s cpu_s sys_s steps/cpu_s steps/crit_s dev_acc
for r in $(seq "$RUNS"); do
  for j in $THREADS; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f '%U %S' -o "$tmp/time" "$GYRO" classify train --arch transformer --epochs "$EPOCHS" --patience 0 -j "$j" \
      -o "$tmp/m.clf" "$tmp/tr.pb" > "$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
    read -r u s < "$tmp/time"
    line=$(grep -o '[0-9]* steps, [0-9.]* steps/s; best dev accuracy [0-9.]*%' "$tmp/out") ||
      { echo "no summary line in classify train's output:"; cat "$tmp/out"; exit 1; }
    steps=$(awk '{print $1}' <<<"$line"); rate=$(awk '{print $3}' <<<"$line")
    a=$(awk '{gsub("%","",$NF); print $NF}' <<<"$line")
    crit=$(sed -n 's/^epoch [0-9]*: .*, critical path \([0-9.]*\) s$/\1/p' "$tmp/out" | tail -1)
    c=$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')
    pc=$(awk -v n="$steps" -v c="$c" 'BEGIN{printf "%.2f", n / c}')
    pk=$(awk -v n="$steps" -v c="$crit" 'BEGIN{printf "%.2f", n / c}')
    printf '%-4s %-3s %6s %10s %9s %8s %10s %11s %8s\n' "$r" "$j" "$load" "$rate" "$c" "$s" "$pc" "$pk" "$a"
    sps[$j]+="$rate "; cpu[$j]+="$c "; sys[$j]+="$s "; spc[$j]+="$pc "; scp[$j]+="$pk "; acc[$j]+="$a "
  done
done
echo "medians:"
printf '%-3s %10s %9s %8s %10s %11s %8s %8s %10s\n' j steps/s cpu_s sys_s steps/cpu_s steps/crit_s dev_acc wall_x critical_x
base= cbase= j0= table=
for j in $THREADS; do
  m() { tr ' ' '\n' <<<"$1" | grep . | median; }
  ms=$(m "${sps[$j]}"); base=${base:-$ms}
  mc=$(m "${scp[$j]}"); cbase=${cbase:-$mc}; j0=${j0:-$j}
  [ "$j" = "$j0" ] || table+=$(awk -v j="$j" -v j0="$j0" -v a="$mc" -v b="$cbase" -v w="$ms" -v wb="$base" 'BEGIN {
    x = a / b; printf "TABLE | classify train --threads %d vs %d, steps per second of the critical path (wall %.2fx on this machine) | %.2f | %.2f | %.2f | >= 1.8x at 2 threads | %s |\n",
      j, j0, w / wb, a, b, x, (j == 2 ? (x >= 1.8 ? "met" : "not met") : "—") }')$'\n'
  printf '%-3s %10s %9s %8s %10s %11s %8s %7.2fx %9.2fx\n' "$j" "$ms" "$(m "${cpu[$j]}")" "$(m "${sys[$j]}")" \
    "$(m "${spc[$j]}")" "$mc" "$(m "${acc[$j]}")" "$(awk -v a="$ms" -v b="$base" 'BEGIN{print a / b}')" \
    "$(awk -v a="$mc" -v b="$cbase" 'BEGIN{print a / b}')"
done
echo "(steps/s: wall-clock, training loop only; cpu_s, sys_s: the whole process; steps/crit_s: steps per"
echo " second of the loop's critical path; wall_x, critical_x: speed-ups over j=$(awk '{print $1}' <<<"$THREADS"))"
printf "%s" "$table"

#!/usr/bin/env bash
# run-all.sh — `make bench`: run every benchmark script of tests/bench/ in turn, then print one
# table of the headline figures.
#   tests/bench/run-all.sh path/to/gyro
#   env: BENCH (the scripts to run, names without .sh, e.g. "grpc_load char2vec_speed"; default
#        every script of tests/bench/). `make bench-speed` runs the set behind the speed table:
#        grpc_load classify_latency classify_speed classify_train_threads char2vec_speed.
# Each script gets the binary in $GYRO (absolute) and no arguments, so it uses its defaults;
# figures go to standard output. Benchmarks are long and niced; run them on a quiet machine.
#
# The closing table: a script contributes rows by printing lines of the form
#   TABLE | figure | gyro | anchor | ratio | goal | met |
# (ratio: how many times better gyro is than the anchor; goal and met: the target and whether
# this run reached it, "—" where a column does not apply). They are gathered from every
# script's output, in order, under one header; a script that failed is named below the table.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
GYRO=${1:?usage: tests/bench/run-all.sh path/to/gyro}
GYRO=$(cd "$(dirname "$GYRO")" && pwd)/$(basename "$GYRO")
export GYRO
rc=0
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
failed=()
scripts=()
if [ -n "${BENCH:-}" ]; then
  for b in $BENCH; do
    b=${b%.sh}
    if [ ! -f "$here/$b.sh" ] || [ "$b" = run-all ]; then
      echo "run-all.sh: no benchmark tests/bench/$b.sh" >&2
      exit 2
    fi
    scripts+=("$here/$b.sh")
  done
else
  for s in "$here"/*.sh; do
    [ "$(basename "$s")" = run-all.sh ] || scripts+=("$s")
  done
fi
started=$(date +%s)
for s in "${scripts[@]}"; do
  echo "== $(basename "$s")"
  nice bash "$s" | tee >(sed -n 's/^TABLE //p' >> "$rows")
  if [ "${PIPESTATUS[0]}" != 0 ]; then
    echo "benchmark $(basename "$s") failed"
    failed+=("$(basename "$s")")
    rc=1
  fi
done
sleep 0.2 # the last tee's sed
echo
echo "== summary (make bench, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(( ($(date +%s) - started + 30) / 60 )) min, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo "| figure | gyro | anchor | ratio | goal | met |"
echo "| --- | --- | --- | --- | --- | --- |"
cat "$rows"
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
exit $rc

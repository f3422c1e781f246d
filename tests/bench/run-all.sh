#!/usr/bin/env bash
# run-all.sh — `make bench`: run every benchmark script of tests/bench/ in turn.
#   tests/bench/run-all.sh path/to/gyro
# Each script gets the binary in $GYRO (absolute) and no arguments, so it uses its defaults;
# figures go to standard output. Benchmarks are long and niced; run them on a quiet machine.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
GYRO=${1:?usage: tests/bench/run-all.sh path/to/gyro}
GYRO=$(cd "$(dirname "$GYRO")" && pwd)/$(basename "$GYRO")
export GYRO
rc=0
for s in "$here"/*.sh; do
  [ "$(basename "$s")" = run-all.sh ] && continue
  echo "== $(basename "$s")"
  nice bash "$s" || { echo "benchmark $(basename "$s") failed"; rc=1; }
done
exit $rc

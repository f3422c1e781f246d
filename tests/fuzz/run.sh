#!/usr/bin/env bash
# run.sh — run every fuzz target for SECONDS each over its seeds (BUILD/fuzz/seeds/<target>) and
# its growing corpus (BUILD/fuzz/work/<target>); a crash, leak, sanitizer report, timeout or
# out-of-memory stops with the reproducer in BUILD/fuzz/crashes/ and exit 1.
#   tests/fuzz/run.sh BUILD SECONDS TARGET...
set -uo pipefail
B=$1 S=$2
shift 2
fail=0
n_ok=0
n_bad=0
for bin in "$@"; do
  t=$(basename "$bin"); t=${t#fuzz_}
  mkdir -p "$B/fuzz/work/$t" "$B/fuzz/crashes" "$B/fuzz/seeds/$t"
  log="$B/fuzz/$t.log"
  start=$(date +%s)
  if "$bin" -max_total_time="$S" -timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
       -artifact_prefix="$B/fuzz/crashes/$t-" -print_final_stats=1 \
       "$B/fuzz/work/$t" "$B/fuzz/seeds/$t" > "$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    n_ok=$((n_ok + 1))
    echo "fuzz $t: ok, ${runs:-?} executions in $(( $(date +%s) - start )) s, $cov, corpus $(ls "$B/fuzz/work/$t" | wc -l)"
  else
    fail=1
    n_bad=$((n_bad + 1))
    echo "fuzz $t: FAILED (log $log)"
    grep -E 'ERROR|runtime error|Test unit written|SUMMARY' "$log" | head -n 8 | sed 's/^/    /'
  fi
done
echo "fuzz: $n_ok passed, $n_bad failed"
exit $fail
